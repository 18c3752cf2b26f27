//! The JS side's protocol file is what `ttlkv_web::protocol` generates, and the package's types
//! list the same error codes: the numbers and names the two sides agree on have one definition.
#![cfg(not(target_arch = "wasm32"))]

use std::path::PathBuf;

use ttlkv_web::protocol;

fn js_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../js")
        .join(name)
}

#[test]
fn protocol_js_is_generated_from_the_rust_definition() {
    let path = js_file("protocol.js");
    let expected = protocol::javascript();
    if std::env::var_os("TTLKV_WRITE_PROTOCOL").is_some() {
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "bindings/js/protocol.js differs from bindings/web/src/protocol.rs: run \
         `TTLKV_WRITE_PROTOCOL=1 cargo test -p ttlkv-web --test protocol_is_one_definition`"
    );
}

#[test]
fn the_typescript_codes_are_the_error_kinds_codes() {
    let types = std::fs::read_to_string(js_file("index.d.ts")).unwrap();
    let start = types
        .find("export declare const CODES: readonly [")
        .expect("index.d.ts declares CODES");
    let list = &types[start..];
    let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
    let declared: Vec<&str> = list
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(declared, protocol::error_codes());
}

#[test]
fn no_other_js_file_spells_an_error_code_list_or_a_limit() {
    // The JS sources import these from protocol.js; a second definition would drift.
    let dir = js_file("");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".js") || name == "protocol.js" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for defined in [
            "const CODES",
            "const MAX_KEY_BYTES",
            "const MAX_VALUE_BYTES",
            "const TAG_",
        ] {
            assert!(!text.contains(defined), "{name} defines `{defined}`");
        }
    }
}
