//! The rotation CronJob's script: rotate the keys in the pod's working copy with
//! `keystone-manage`, then stage them on the staging Secret for the operator to commit
//! (facts §2.10). It PATCHes with the pod's ServiceAccount token (whose Role allows get and
//! patch of that one Secret) and uses only the Python standard library.

use crate::rotation::stage_script;

/// The script for keys of `kind` (`fernet` or `credential`): `fernet_rotate`, or
/// `credential_rotate` then `credential_migrate`, over `/etc/keystone/{kind}-keys`.
pub(crate) fn rotate_script(kind: &str) -> String {
    let commands = match kind {
        "fernet" => vec!["fernet_rotate"],
        _ => vec!["credential_rotate", "credential_migrate"],
    };
    let manage: String = commands
        .iter()
        .map(|c| format!("keystone-manage --config-dir=/etc/keystone/keystone.conf.d/ {c}\n"))
        .collect();
    let comment = format!(
        "# Rotates the {kind} keys of this pod's working copy and stages them on the Secret\n\
         # $SECRET_NAMESPACE/$SECRET_NAME; the operator validates and commits them.\n"
    );
    let build_data = format!(
        r#"key_dir = "/etc/keystone/{kind}-keys"
data = {{}}
for name in sorted(os.listdir(key_dir)):
    with open(os.path.join(key_dir, name), "rb") as f:
        data[name] = base64.b64encode(f.read()).decode()
"#
    );
    let report = format!(r#""staged %d {kind} keys (HTTP %d)" % (len(data), response.status)"#);
    stage_script(&comment, &manage, &build_data, &report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fernet_script_rotates_then_stages_and_the_credential_script_also_migrates() {
        let fernet = rotate_script("fernet");
        assert!(fernet.starts_with("#!/bin/sh\n"));
        assert!(fernet.contains(
            "keystone-manage --config-dir=/etc/keystone/keystone.conf.d/ fernet_rotate\nexec python3"
        ));
        assert!(fernet.contains("key_dir = \"/etc/keystone/fernet-keys\""));
        assert!(fernet.contains("\"cobaltcore.c5c3.io/rotation-completed-at\": now"));
        let credential = rotate_script("credential");
        assert!(credential.contains(
            "credential_rotate\nkeystone-manage --config-dir=/etc/keystone/keystone.conf.d/ credential_migrate\n"
        ));
        assert!(credential.contains("key_dir = \"/etc/keystone/credential-keys\""));
    }
}
