//! The RBD block (CobaltCore's webhook, beyond the schema's patterns):
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | `user` without the `client.` prefix (the CEL rule's twin) | `spec.rbd.user` | user is the cephx name without its client. prefix (write cinder, not client.cinder) |
//! | no CR/LF in `pool`, `user`, `clusterName`, a monitor | the field (`spec.rbd.monitors[i]`) | must not contain a newline or carriage return |
//! | a monitor's port between 1 and 65535 | `spec.rbd.monitors[i]` | monitor port must be between 1 and 65535 |
//! | each network a canonical IPv4 CIDR | `spec.rbd.networks[i]` | must be a canonical IPv4 CIDR (a.b.c.d/n with no host bits set, e.g. 10.0.0.0/16) |
//!
//! DECISION: CobaltCore's wording of the last three was not found in its source; these
//! messages are this plugin's. A network is canonical as Go's `netip.ParsePrefix` reads
//! one and `Masked()` leaves it: four decimal octets ≤ 255 without leading zeros, a
//! prefix ≤ 32, no bit set past the prefix.

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use super::spec::has_line_break;
use crate::types::RbdBackupBackendSpec;

const CLIENT_PREFIX_MESSAGE: &str =
    "user is the cephx name without its client. prefix (write cinder, not client.cinder)";
const LINE_BREAK_MESSAGE: &str = "must not contain a newline or carriage return";
const PORT_MESSAGE: &str = "monitor port must be between 1 and 65535";
const CIDR_MESSAGE: &str =
    "must be a canonical IPv4 CIDR (a.b.c.d/n with no host bits set, e.g. 10.0.0.0/16)";

/// Checks the RBD block.
pub(super) fn check(rbd: &RbdBackupBackendSpec, errors: &mut FieldErrors) {
    for (field, value) in [
        ("spec.rbd.pool", &rbd.pool),
        ("spec.rbd.user", &rbd.user),
        ("spec.rbd.clusterName", &rbd.cluster_name),
    ] {
        if has_line_break(value) {
            errors.invalid(field, &json!(value), LINE_BREAK_MESSAGE);
        }
    }
    if rbd.user.starts_with("client.") {
        errors.invalid("spec.rbd.user", &json!(rbd.user), CLIENT_PREFIX_MESSAGE);
    }
    for (i, monitor) in rbd.monitors.iter().enumerate() {
        let field = format!("spec.rbd.monitors[{i}]");
        if has_line_break(monitor) {
            errors.invalid(&field, &json!(monitor), LINE_BREAK_MESSAGE);
        } else if let Some((_, port)) = monitor.rsplit_once(':')
            && !port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
        {
            errors.invalid(&field, &json!(monitor), PORT_MESSAGE);
        }
    }
    for (i, network) in rbd.networks.iter().enumerate() {
        if !is_canonical_ipv4_cidr(network) {
            let field = format!("spec.rbd.networks[{i}]");
            errors.invalid(&field, &json!(network), CIDR_MESSAGE);
        }
    }
}

/// Whether `text` is a canonical IPv4 CIDR.
pub(crate) fn is_canonical_ipv4_cidr(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else {
        return false;
    };
    let decimal = |part: &str, max: u32| -> Option<u32> {
        let canonical = !part.is_empty()
            && part.len() <= 3
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'));
        canonical
            .then(|| part.parse::<u32>().ok())
            .flatten()
            .filter(|n| *n <= max)
    };
    let octets: Vec<Option<u32>> = address.split('.').map(|o| decimal(o, 255)).collect();
    let (Some(prefix), 4) = (decimal(prefix, 32), octets.len()) else {
        return false;
    };
    let Some(value) = octets
        .into_iter()
        .try_fold(0u32, |acc, o| o.map(|o| (acc << 8) | o))
    else {
        return false;
    };
    let host_bits = u32::MAX.checked_shr(prefix).unwrap_or(0);
    value & host_bits == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_is_canonical_only_with_no_host_bits_and_no_leading_zeros() {
        // (network, canonical)
        let table = [
            ("10.0.0.0/16", true),
            ("0.0.0.0/0", true),
            ("192.168.1.7/32", true),
            ("10.0.0.1/16", false),
            ("10.0.0.0/33", false),
            ("10.00.0.0/16", false),
            ("10.0.0.0/08", false),
            ("256.0.0.0/8", false),
            ("10.0.0/8", false),
            ("10.0.0.0.0/8", false),
            ("10.0.0.0", false),
            ("10.0.0.0/", false),
            ("::/0", false),
        ];
        for (network, expected) in table {
            assert_eq!(is_canonical_ipv4_cidr(network), expected, "{network}");
        }
    }
}
