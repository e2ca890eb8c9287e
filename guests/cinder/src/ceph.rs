//! The Ceph client files an RBD backend's Secret carries (facts §3.4): `ceph.conf` and the
//! user's `keyring`, mounted at `/etc/ceph` under the cluster's names.

use crate::satellites::RbdSpec;

/// `[global]` with the monitors, the keyring path, no log file and the admin socket.
pub(crate) fn ceph_conf(rbd: &RbdSpec) -> String {
    let cluster = rbd.cluster();
    format!(
        "[global]\nmon_host = {}\nkeyring = /etc/ceph/{cluster}.client.{}.keyring\n\
         log_file = /dev/null\nadmin_socket = /tmp/$cluster-$name.$pid.$cctid.asok\n",
        rbd.monitors.join(","),
        rbd.user
    )
}

/// `[client.<user>]` with the trimmed key, tab-indented.
pub(crate) fn keyring(rbd: &RbdSpec, user_key: &str) -> String {
    format!("[client.{}]\n\tkey = {}\n", rbd.user, user_key.trim())
}

/// The file names in `/etc/ceph`: `<cluster>.conf` and `<cluster>.client.<user>.keyring`.
pub(crate) fn file_names(rbd: &RbdSpec) -> (String, String) {
    let cluster = rbd.cluster();
    (
        format!("{cluster}.conf"),
        format!("{cluster}.client.{}.keyring", rbd.user),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceph_files_name_the_monitors_the_keyring_and_the_trimmed_key() {
        let rbd = RbdSpec {
            pool: "volumes".into(),
            user: "cinder".into(),
            monitors: vec!["10.0.0.1:6789".into(), "mon2".into()],
            ..RbdSpec::default()
        };
        assert_eq!(
            ceph_conf(&rbd),
            "[global]\nmon_host = 10.0.0.1:6789,mon2\nkeyring = /etc/ceph/ceph.client.cinder.keyring\n\
             log_file = /dev/null\nadmin_socket = /tmp/$cluster-$name.$pid.$cctid.asok\n"
        );
        assert_eq!(keyring(&rbd, " AQB=\n"), "[client.cinder]\n\tkey = AQB=\n");
        assert_eq!(
            file_names(&rbd),
            (
                "ceph.conf".to_owned(),
                "ceph.client.cinder.keyring".to_owned()
            )
        );
    }
}
