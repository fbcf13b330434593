//! Lint and fix on any bytes: no panic; fix never changes text that does not parse, never
//! produces text that does not, and a second fix changes nothing.
#![no_main]

use golint_k8s::config::Config;
use golint_k8s::fix::engine::{fix_source, Failure};
use golint_k8s::lint::{lint_source, Selection};
use golint_k8s::source::{Origin, Source};
use golint_k8s::yaml;
use libfuzzer_sys::fuzz_target;

fn parses(text: &str) -> bool {
    let src = Source::from_text(Origin::Stdin("-".into()), text.to_string());
    let y = yaml::parse(src.yaml_text(), src.bom_len);
    y.stream_error.is_none() && y.docs.iter().all(|d| d.error.is_none())
}

fuzz_target!(|data: &[u8]| {
    let origin = || Origin::Stdin("-".into());
    let Ok(src) = Source::decode(origin(), data.to_vec()) else {
        return;
    };
    let text = src.text.clone();
    let (cfg, sel) = (Config::default(), Selection::default());
    let _ = lint_source(src, &cfg, &sel);
    let valid = parses(&text);
    for unsafe_fixes in [false, true] {
        let out = fix_source(
            Source::from_text(origin(), text.clone()),
            &cfg,
            &sel, &Default::default(),
            unsafe_fixes,
        );
        if let Some(Failure::Broken(m)) = &out.error {
            panic!("a fix would break the YAML: {m}");
        }
        if !valid {
            assert!(!out.changed(), "text that does not parse was changed");
            continue;
        }
        assert!(parses(&out.text), "the fixed text does not parse");
        let again = fix_source(
            Source::from_text(origin(), out.text.clone()),
            &cfg,
            &sel, &Default::default(),
            unsafe_fixes,
        );
        assert!(!again.changed(), "a second fix changed the text again");
    }
});
