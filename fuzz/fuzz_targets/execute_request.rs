//! Any input as the JSON body of an `execute_kip` request (commands,
//! batches, parameters, cursors, dry runs, explain) against the medical
//! example graph: no panic, a well-formed KIP response or API error, and no
//! write (KML is previewed). See `src/request.rs`.

#![no_main]

use std::sync::OnceLock;

use kip_fuzz::request::{Fixture, execute_request};
use libfuzzer_sys::fuzz_target;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(Fixture::new)
}

fuzz_target!(|data: &[u8]| {
    execute_request(&fixture().api, data);
});
