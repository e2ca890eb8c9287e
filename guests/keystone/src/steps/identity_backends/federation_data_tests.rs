use super::*;
use crate::steps::identity_backends::metadata::testing::{oidc_render, saml_render};
use crate::testing::keystone;

fn ks() -> Keystone {
    serde_json::from_value(keystone()).expect("a Keystone")
}

fn items(items: &[KeyToPath]) -> Vec<(&str, &str)> {
    items
        .iter()
        .map(|i| (i.key.as_str(), i.path.as_str()))
        .collect()
}

fn text(data: &BTreeMap<String, ByteString>, key: &str) -> String {
    String::from_utf8(data[key].0.clone()).expect("text")
}

#[test]
fn oidc_and_saml_backends_fill_one_secret_mounted_under_the_module_file_names() {
    let mut a = oidc_render("a-oidc", "a", "openid");
    a.egress_ports = vec![443, 8443];
    let mut b = oidc_render("b-oidc", "b", "oidc2");
    b.egress_ports = vec![8443, 80];
    b.remote_id_attribute = "HTTP_OIDC_OTHER".to_owned();
    let mut s = saml_render("corp-saml", "adfs", "saml2");
    s.remote_id_attribute = "HTTP_MELLON_X".to_owned();
    let oidc = [a.clone(), b];
    let saml = [s];
    let got = assemble(&ks(), &oidc, &saml, "pw");

    assert_eq!(
        got.data.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "a-oidc.client",
            "a-oidc.conf",
            "a-oidc.provider",
            "b-oidc.client",
            "b-oidc.conf",
            "b-oidc.provider",
            "corp-saml.idp-metadata.xml",
            "proxy.conf",
            "sp-cert.pem",
            "sp-key.pem",
            "sp-metadata.xml",
        ]
    );
    assert_eq!(
        text(&got.data, "proxy.conf"),
        proxy_conf::render(&ks(), &oidc, &saml, "pw")
    );
    assert_eq!(got.data["a-oidc.provider"].0, a.provider);
    assert_eq!(got.data["a-oidc.client"].0, a.client);
    assert_eq!(got.data["a-oidc.conf"].0, a.conf);
    assert_eq!(text(&got.data, "sp-key.pem"), "KEY");
    assert_eq!(text(&got.data, "sp-cert.pem"), "CERT");
    assert_eq!(text(&got.data, "sp-metadata.xml"), "SP");
    assert_eq!(
        text(&got.data, "corp-saml.idp-metadata.xml"),
        "<EntityDescriptor entityID=\"urn:idp\"/>"
    );
    assert_eq!(
        items(&got.metadata_items),
        [
            ("a-oidc.provider", "a.example.com%2Frealms%2Fx.provider"),
            ("a-oidc.client", "a.example.com%2Frealms%2Fx.client"),
            ("a-oidc.conf", "a.example.com%2Frealms%2Fx.conf"),
            ("b-oidc.provider", "b.example.com%2Frealms%2Fx.provider"),
            ("b-oidc.client", "b.example.com%2Frealms%2Fx.client"),
            ("b-oidc.conf", "b.example.com%2Frealms%2Fx.conf"),
        ]
    );
    assert_eq!(
        items(&got.mellon_items),
        [
            ("sp-key.pem", "sp-key.pem"),
            ("sp-cert.pem", "sp-cert.pem"),
            ("sp-metadata.xml", "sp-metadata.xml"),
            ("corp-saml.idp-metadata.xml", "corp-saml.idp-metadata.xml"),
        ]
    );
    assert_eq!(
        got.egress_ports,
        [443, 8443, 80],
        "deduplicated, first seen first"
    );
    assert_eq!(
        got.oidc,
        Some(OidcProjection {
            remote_id_attribute: "HTTP_OIDC_ISS".to_owned()
        }),
        "the first OIDC backend's"
    );
    assert_eq!(
        got.saml,
        Some(SamlProjection {
            protocol_id: "saml2".to_owned(),
            remote_id_attribute: "HTTP_MELLON_X".to_owned(),
        })
    );

    let federation = got
        .clone()
        .into_federation("ks-federation-1234".to_owned(), "proxy:1".to_owned());
    assert_eq!(federation.secret_name, "ks-federation-1234");
    assert_eq!(federation.proxy_image, "proxy:1");
    assert_eq!(federation.metadata_items, got.metadata_items);
    assert_eq!(federation.mellon_items, got.mellon_items);
    assert_eq!(federation.egress_ports, got.egress_ports);
    assert_eq!((federation.oidc, federation.saml), (got.oidc, got.saml));
}

#[test]
fn one_kind_of_backend_leaves_the_other_kinds_parts_empty() {
    let oidc_only = assemble(&ks(), &[oidc_render("a", "a", "openid")], &[], "pw");
    assert!(oidc_only.mellon_items.is_empty());
    assert_eq!(oidc_only.saml, None);
    assert_eq!(oidc_only.metadata_items.len(), 3);

    let saml_only = assemble(&ks(), &[], &[saml_render("s", "s", "mapped")], "");
    assert!(saml_only.metadata_items.is_empty());
    assert!(
        saml_only.egress_ports.is_empty(),
        "the sidecar never dials a SAML IdP"
    );
    assert_eq!(saml_only.oidc, None);
    assert_eq!(
        saml_only.data.len(),
        5,
        "proxy.conf and the four SAML files"
    );
}
