//! Machine formats other tools parse: GitHub workflow commands (snapshotted, escaping included).

use assert_cmd::Command;

#[test]
fn github_annotations_escape_commas_colons_and_newlines() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/deployment.yaml"
    ))
    .unwrap();
    // A file name with a comma and a colon must not break the property list.
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .args([
            "lint",
            "-",
            "--format",
            "github",
            "--stdin-filename",
            "deploy/shop,eu:west.yaml",
        ])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8(out.stdout).unwrap();
    for line in s.lines() {
        let (head, message) = line
            .split_once("::")
            .map(|(_, rest)| rest.split_once("::").unwrap())
            .unwrap();
        // Exactly the six properties: the escaped file name adds no separators.
        assert_eq!(head.split(',').count(), 6, "{head}");
        assert!(head.contains("file=deploy/shop%2Ceu%3Awest.yaml"), "{head}");
        assert!(!message.contains('\n') && !message.contains('\r'));
    }
    assert!(
        s.contains("%0Ajudged Go because"),
        "notes ride on escaped newlines"
    );
    // The snapshot keeps the name and place it had when this file was its own test binary.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(
            "formats__github_annotations_escape_commas_colons_and_newlines",
            s
        )
    });
}
