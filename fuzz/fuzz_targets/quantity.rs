//! The quantity parser on any text: strict and API-server parsing agree, and printing a parsed
//! value never panics.
#![no_main]

use golint_k8s::k8s::Quantity;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let strict = Quantity::parse(text);
    let api = Quantity::parse_api(text);
    if let Ok(q) = &strict {
        // The API server only trims; whatever parses strictly parses the same way there.
        let a = api.as_ref().expect("strict parse succeeded but parse_api failed");
        assert_eq!(q.nanos(), a.nanos(), "{text:?}");
        let _ = q.canonical();
        let _ = q.to_string();
        let _ = (q.value_ceil(), q.milli_value_ceil(), q.is_zero());
    }
    if let Err(e) = &strict {
        let _ = e.to_string();
    }
});
