//! For any UTF-8 input: `kip_lang::parse` does not panic; a text that
//! parses formats to a text that parses to the same tree and formats to
//! itself; `kip_lang::format_source` does not panic. See `src/check.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(source) = std::str::from_utf8(data) {
        kip_fuzz::parse_roundtrip(source);
    }
});
