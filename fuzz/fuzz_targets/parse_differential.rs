//! For any UTF-8 input: the fast path for common KML shapes and pest agree
//! (`kip_lang::parse` and `kip_lang::parse_reference` give the same tree
//! with the same spans, or the same errors; whatever the fast path accepts,
//! pest accepts with the same tree). See `src/differential.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(source) = std::str::from_utf8(data) {
        kip_fuzz::differential::check(source);
    }
});
