//! The admin password rotation CronJob's script: mint a random password and stage it on
//! the staging Secret for the operator to validate and commit (facts §2.19). It PATCHes
//! with the pod's ServiceAccount token (whose Role allows get and patch of that one
//! Secret), uses only the Python standard library, and never prints the password.
//!
//! DECISION: the password is exactly `$PASSWORD_LENGTH` characters drawn with `secrets`
//! from the URL-safe alphabet (`A–Z a–z 0–9 - _`, 6 bits each, 144 bits at the minimum
//! length 24), which a user setting `passwordLength` expects; CobaltCore's
//! `token_urlsafe(n)` makes about 1.3 n characters. The alphabet needs no quoting in a
//! shell, an INI file or a URL.

use crate::rotation::stage_script;

/// The script's data key in its ConfigMap, and its name under `/scripts`.
pub(crate) const SCRIPT_KEY: &str = "admin_password_rotate.sh";

/// What the script runs before staging: `data` = the new password.
const MINT: &str = r#"import secrets, string

alphabet = string.ascii_letters + string.digits + "-_"
length = int(os.environ["PASSWORD_LENGTH"])
password = "".join(secrets.choice(alphabet) for _ in range(length))
data = {"password": base64.b64encode(password.encode()).decode()}
"#;

/// The script.
pub(crate) fn rotate_script() -> String {
    stage_script(
        "# Mints a random admin password of $PASSWORD_LENGTH characters and stages it on the\n\
         # Secret $SECRET_NAMESPACE/$SECRET_NAME; the operator validates and commits it.\n",
        "",
        MINT,
        r#""staged a new admin password (HTTP %d)" % response.status"#,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_mints_a_password_of_the_given_length_and_stages_it_without_printing_it() {
        let script = rotate_script();
        assert!(script.starts_with("#!/bin/sh\n# Mints a random admin password"));
        assert!(script.contains("set -eu\nexec python3 - <<'PY'\n"));
        assert!(script.contains(
            "password = \"\".join(secrets.choice(alphabet) for _ in range(length))\n\
             data = {\"password\": base64.b64encode(password.encode()).decode()}\n\
             now = "
        ));
        assert!(script.contains("length = int(os.environ[\"PASSWORD_LENGTH\"])"));
        assert!(script.contains("\"cobaltcore.c5c3.io/rotation-completed-at\": now"));
        assert!(script.contains("\"Content-Type\": \"application/strategic-merge-patch+json\""));
        assert!(script.contains("os.environ[\"SECRET_NAMESPACE\"], os.environ[\"SECRET_NAME\"]"));
        let prints: Vec<&str> = script.lines().filter(|l| l.contains("print(")).collect();
        assert_eq!(
            prints,
            ["    print(\"staged a new admin password (HTTP %d)\" % response.status)"]
        );
        assert!(script.ends_with("PY\n"));
    }
}
