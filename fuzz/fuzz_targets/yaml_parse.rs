//! The YAML layer on any text: the fast path against the reference parser, the span tree, merge keys and aliases, object extraction.
#![no_main]

use golint_k8s::k8s;
use golint_k8s::yaml;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let y = yaml::parse(text, 0);
    // Wherever the fast path accepts a text, it must read it exactly as the reference parser does.
    if let Some(fast) = yaml::parse_fast(text, 0) {
        let reference = yaml::parse_reference(text, 0);
        assert_eq!(format!("{fast:?}"), format!("{reference:?}"), "{text:?}");
    }
    for doc in &y.docs {
        if let Some(root) = doc.root {
            // Object extraction follows `items`, merge keys and aliases: the paths an alias bomb
            // or a merge cycle would blow up.
            for o in k8s::objects(&y, root) {
                let _ = y.entries(o.root);
                let _ = y.path(o.root, &["spec", "template", "spec", "containers"]);
            }
            let _ = y.entries(root);
        }
    }
});
