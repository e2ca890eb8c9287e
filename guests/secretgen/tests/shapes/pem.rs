//! PEM: each block's label and line width, and what its body holds (a key's type and size,
//! a certificate's fields).

use base64::Engine as _;
use serde_json::{Value, json};

use super::IssueWindow;

/// One PEM block: its label, its base64 body lines and the DER they decode to.
pub struct Block {
    pub label: String,
    pub lines: Vec<String>,
    pub der: Vec<u8>,
}

/// The blocks of `text`, or why it is not PEM (text outside a block included).
pub fn blocks(text: &[u8]) -> Result<Vec<Block>, String> {
    let text = std::str::from_utf8(text).map_err(|e| format!("not UTF-8: {e}"))?;
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("-----BEGIN ")) {
            (None, Some(rest)) => {
                open = Some(Block {
                    label: rest.trim_end_matches("-----").to_owned(),
                    lines: Vec::new(),
                    der: Vec::new(),
                });
            }
            (None, None) => return Err(format!("text outside a PEM block: {line:?}")),
            (Some(block), _) if line == format!("-----END {}-----", block.label) => {
                let mut block = open.take().ok_or("unreachable")?;
                let body = block.lines.concat();
                block.der = base64::engine::general_purpose::STANDARD
                    .decode(body)
                    .map_err(|e| format!("{}: the body is not base64: {e}", block.label))?;
                found.push(block);
            }
            (Some(block), _) => block.lines.push(line.to_owned()),
        }
    }
    match open {
        Some(block) => Err(format!("{}: no END line", block.label)),
        None if found.is_empty() => Err("no PEM block".to_owned()),
        None => Ok(found),
    }
}

/// The width of a block's lines: that of every line but the last, which may be shorter
/// (`irregular` when they differ).
pub fn line_width(lines: &[String]) -> Value {
    let widths: Vec<usize> = lines.iter().map(String::len).collect();
    match widths.split_last() {
        None => json!(0),
        Some((last, [])) => json!(last),
        Some((last, full)) if full.iter().all(|w| w == &full[0]) && last <= &full[0] => {
            json!(full[0])
        }
        Some(_) => json!(format!("irregular: {widths:?}")),
    }
}

/// A PEM value: its blocks and whether it ends with a newline.
pub fn shape(value: &[u8], window: &IssueWindow) -> Value {
    match blocks(value) {
        Ok(blocks) => json!({
            "kind": "pem",
            "blocks": blocks.iter().map(|b| block(b, window)).collect::<Vec<_>>(),
            "trailingNewline": value.ends_with(b"\n"),
        }),
        Err(e) => json!({"kind": "not PEM", "error": e}),
    }
}

fn block(block: &Block, window: &IssueWindow) -> Value {
    let mut shape = json!({"label": block.label, "lineWidth": line_width(&block.lines)});
    shape["content"] = match block.label.as_str() {
        "CERTIFICATE" => super::certificate::shape(&block.der, window),
        "PRIVATE KEY" => pkcs8_key(&block.der),
        "RSA PRIVATE KEY" => pkcs1_key(&block.der),
        "EC PRIVATE KEY" => sec1_key(&block.der),
        _ => json!("not read"),
    };
    shape
}

fn rsa(key: &rsa::PrivateKey) -> Value {
    use rsa::traits::PublicKeyParts as _;
    json!({"type": "rsa", "bits": super::bits(&key.n_bytes())})
}

/// The curve of an ECDSA private key, from its PKCS#8 DER or (`pkcs8` false) its SEC 1 DER.
fn ecdsa_curve(der: &[u8], pkcs8: bool) -> Option<Value> {
    use pkcs8::DecodePrivateKey as _;
    let decodes = [
        (
            "P-256",
            p256::SecretKey::from_pkcs8_der(der).is_ok(),
            p256::SecretKey::from_sec1_der(der).is_ok(),
        ),
        (
            "P-384",
            p384::SecretKey::from_pkcs8_der(der).is_ok(),
            p384::SecretKey::from_sec1_der(der).is_ok(),
        ),
        (
            "P-521",
            p521::SecretKey::from_pkcs8_der(der).is_ok(),
            p521::SecretKey::from_sec1_der(der).is_ok(),
        ),
    ];
    decodes
        .into_iter()
        .find(|(_, as_pkcs8, as_sec1)| if pkcs8 { *as_pkcs8 } else { *as_sec1 })
        .map(|(curve, ..)| json!({"type": "ecdsa", "curve": curve}))
}

/// A PKCS#8 `PRIVATE KEY`: RSA, an ECDSA curve or Ed25519.
fn pkcs8_key(der: &[u8]) -> Value {
    use pkcs8::DecodePrivateKey as _;
    if let Ok(key) = rsa::PrivateKey::from_pkcs8_der(der) {
        return rsa(&key);
    }
    if let Some(curve) = ecdsa_curve(der, true) {
        return curve;
    }
    if ed25519_dalek::SigningKey::from_pkcs8_der(der).is_ok() {
        return json!({"type": "ed25519"});
    }
    json!("a PKCS#8 key of no known type")
}

/// A PKCS#1 `RSA PRIVATE KEY`.
fn pkcs1_key(der: &[u8]) -> Value {
    use pkcs1::DecodeRsaPrivateKey as _;
    match rsa::PrivateKey::from_pkcs1_der(der) {
        Ok(key) => rsa(&key),
        Err(e) => json!(format!("not PKCS#1: {e}")),
    }
}

/// A SEC 1 `EC PRIVATE KEY`.
fn sec1_key(der: &[u8]) -> Value {
    ecdsa_curve(der, false).unwrap_or_else(|| json!("a SEC 1 key of no known curve"))
}
