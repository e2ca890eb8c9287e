//! OpenSSH keys: the private key file's armour, cipher and KDF; both files' key type, size
//! and comment.

use serde_json::{Value, json};
use ssh_key::{PrivateKey, PublicKey};

/// An `OPENSSH PRIVATE KEY` file.
pub fn private(value: &[u8]) -> Value {
    let blocks = match super::pem::blocks(value) {
        Ok(blocks) => blocks,
        Err(e) => return json!({"kind": "not PEM", "error": e}),
    };
    let [block] = blocks.as_slice() else {
        return json!({"kind": "not one PEM block"});
    };
    match PrivateKey::from_openssh(value) {
        Ok(key) => json!({
            "kind": "opensshPrivate",
            "label": block.label,
            "lineWidth": super::pem::line_width(&block.lines),
            "cipher": key.cipher().as_str(),
            "kdf": if key.kdf().is_none() { "none" } else { "set" },
            "key": key_data(key.public_key()),
            "comment": !key.comment().is_empty(),
            "trailingNewline": value.ends_with(b"\n"),
        }),
        Err(e) => json!({"kind": "not an OpenSSH private key", "error": e.to_string()}),
    }
}

/// An OpenSSH public key line (`.pub`).
pub fn public(value: &[u8]) -> Value {
    let text = String::from_utf8_lossy(value);
    match PublicKey::from_openssh(text.trim_end_matches('\n')) {
        Ok(key) => json!({
            "kind": "opensshPublic",
            "key": key_data(&key),
            "comment": !key.comment().is_empty(),
            "trailingNewline": value.ends_with(b"\n"),
        }),
        Err(e) => json!({"kind": "not an OpenSSH public key", "error": e.to_string()}),
    }
}

fn key_data(key: &PublicKey) -> Value {
    let algorithm = key.algorithm().as_str().to_owned();
    match key.key_data().rsa() {
        Some(rsa) => json!({
            "algorithm": algorithm,
            "bits": rsa.n().as_positive_bytes().map_or(0, super::bits),
        }),
        None => json!({"algorithm": algorithm}),
    }
}
