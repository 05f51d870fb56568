//! Any UTF-8 input as a `.kip` capsule, imported as a dry run against the
//! medical example graph: no panic, a consistent report, no write. See
//! `src/request.rs`.

#![no_main]

use std::sync::OnceLock;

use kip_fuzz::request::{Fixture, capsule_import};
use libfuzzer_sys::fuzz_target;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(Fixture::new)
}

fuzz_target!(|data: &[u8]| {
    capsule_import(&fixture().api, data);
});
