use serde_json::json;

use super::*;
use crate::pass::Projection;
use crate::testing::{cluster, converge, pass, secret_text};

#[test]
fn a_valid_projection_renders_glance_api_conf_with_the_backends_and_no_credential() {
    let cluster = cluster();
    let mut pass = pass(&cluster);
    pass.projection = Projection {
        valid: true,
        enabled_backends: "a:s3,b:s3".into(),
        default_backend: "a".into(),
        secret_name: "glance-backends-1234".into(),
        hosts: vec![],
    };
    pass.glance.spec.region = "RegionOne".into();
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(
        pass.config_secret.starts_with("glance-config-"),
        "{}",
        pass.config_secret
    );
    assert_eq!(pass.backends_secret, "glance-backends-1234");
    let rendered = secret_text(&cluster, &pass.config_secret, GLANCE_API_CONF);
    assert_eq!(
        rendered,
        "[DEFAULT]\n\
         bind_port = 9292\n\
         enabled_backends = a:s3,b:s3\n\
         \n\
         [glance_store]\n\
         default_backend = a\n\
         \n\
         [keystone_authtoken]\n\
         auth_type = password\n\
         auth_url = http://keystone.openstack.svc:5000/v3\n\
         memcached_servers = memcached:11211\n\
         project_domain_name = Default\n\
         project_name = service\n\
         region_name = RegionOne\n\
         user_domain_name = Default\n\
         username = glance\n\
         www_authenticate_uri = http://keystone.openstack.svc:5000/v3\n\
         \n\
         [paste_deploy]\n\
         flavor = keystone\n"
    );
    for secret in ["db-pw", "svc-pw"] {
        assert!(!rendered.contains(secret), "no credential rendered");
    }
}

#[test]
fn an_invalid_projection_keeps_the_config_and_backends_the_deployment_mounts() {
    let cluster = crate::testing::cluster_with_backends(&["a"]);
    converge(&cluster);
    let mounted = |volume: &str| {
        let deployment = cluster
            .server("Deployment", "glance")
            .expect("the Deployment");
        deployment["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .and_then(|v| v.iter().find(|v| v["name"] == volume))
            .and_then(|v| v["secret"]["secretName"].as_str())
            .map(str::to_owned)
            .expect("mounted")
    };
    let (config, backends) = (mounted(CONFIG_VOLUME), mounted(BACKENDS_VOLUME));
    // The default loses its credentials: no default any more.
    cluster.change("GlanceBackend", "a", |o| {
        o["status"]["conditions"][0]["status"] = json!("False");
    });
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        (pass.config_secret, pass.backends_secret),
        (config, backends)
    );
}

#[test]
fn an_invalid_projection_without_a_deployment_leaves_nothing_to_mount() {
    let cluster = cluster();
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(pass.config_secret, "");
    assert!(
        cluster
            .names("Secret")
            .iter()
            .all(|n| !n.starts_with("glance-config-"))
    );
}
