//! For any UTF-8 input read as a YAML knowledge bundle: the import pipeline
//! does not panic, never writes (a dry run against a nexus holding the
//! medical example), and reports `imported` exactly when it lists no error,
//! every error with a message and a hint.

#![no_main]

use std::sync::OnceLock;

use kip_capsule::{ImportOptions, import_text_with};
use kip_nexus::{Nexus, Origin};
use libfuzzer_sys::fuzz_target;

struct Fixture {
    _dir: tempfile::TempDir,
    nexus: Nexus,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let nexus = Nexus::open(dir.path()).expect("nexus");
        for (name, text) in [
            ("10.kip", include_str!("../../capsules/examples/10_medical_schema.kip")),
            ("11.kip", include_str!("../../capsules/examples/11_medical_data.kip")),
            ("12.kip", include_str!("../../capsules/examples/12_cognizine.kip")),
        ] {
            let r = kip_capsule::import_text(&nexus, name, text, &Origin::default());
            assert!(r.is_imported(), "{name}: {:?}", r.errors);
        }
        Fixture { _dir: dir, nexus }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let options = ImportOptions {
        dry_run: true,
        progress: None,
        originator: None,
        owner: false,
    };
    let r = import_text_with(&fixture().nexus, "fuzz.yaml", text, &Origin::default(), &options);
    assert_eq!(r.is_imported(), r.errors.is_empty());
    for e in &r.errors {
        assert!(!e.message.is_empty() && !e.hint.is_empty(), "{e:?}");
    }
});
