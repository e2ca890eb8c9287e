use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::steps::identity_backends::metadata::testing::{Idp, refused};
use crate::testing::{keystone, keystone_with, pass};

const ENTITY: &str = "https://idp.example.com/saml";
const METADATA: &str = "<EntityDescriptor entityID=\"https://idp.example.com/saml\"/>";
const BASE: &str = "http://ks.ns.svc.cluster.local:5000\
                    /v3/OS-FEDERATION/identity_providers/adfs/protocols/mapped/auth/mellon";

/// The SAML backend `corp-saml` (identity provider `adfs`) with `patch` merged into its
/// block and one mapping rule.
fn backend(patch: Value) -> IdentityBackend {
    let mut saml = json!({"idpEntityID": ENTITY, "identityProviderName": "adfs",
        "idpMetadata": {"inline": METADATA}, "forwardAttributes": ["email", "Groups"]});
    if let (Some(s), Some(p)) = (saml.as_object_mut(), patch.as_object()) {
        s.extend(p.clone());
    }
    serde_json::from_value(json!({
        "metadata": {"name": "corp-saml", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "SAML", "saml": saml,
                 "mappings": [{"remote": [{"type": "HTTP_MELLON_EMAIL"}, {"type": "REMOTE_USER"}]}]}}))
    .expect("a backend")
}

fn render_on(
    cluster: &FakeCluster,
    keystone: &Value,
    idp: &Idp,
    backend: &IdentityBackend,
) -> Result<SamlRender, String> {
    let mut pass = pass(cluster, keystone);
    pass.probe = idp;
    render(&pass, backend)
        .expect("a fault is not an error")
        .map_err(|f| f.to_string())
}

#[test]
fn a_saml_backend_renders_its_sp_files_the_idp_metadata_and_the_proxy_parameters() {
    let cluster = FakeCluster::new();
    let got =
        render_on(&cluster, &keystone(), &Idp::default(), &backend(json!({}))).expect("renders");
    assert_eq!(
        (
            got.backend_name.as_str(),
            got.idp_name.as_str(),
            got.protocol_id.as_str()
        ),
        ("corp-saml", "adfs", "mapped")
    );
    assert_eq!(got.remote_id_attribute, "HTTP_MELLON_IDP");
    assert_eq!(got.idp_entity_id, ENTITY);
    assert_eq!(got.idp_metadata, METADATA.as_bytes());
    assert_eq!(
        got.endpoint_path,
        "/v3/OS-FEDERATION/identity_providers/adfs/protocols/mapped/auth/mellon"
    );
    assert_eq!(got.sp_entity_id, format!("{BASE}/metadata"));
    let keypair = cluster.secret_data("ks-saml-sp");
    assert_eq!(got.sp_cert, keypair["tls.crt"]);
    assert_eq!(got.sp_key, keypair["tls.key"]);
    let (_, der) = x509_cert::der::pem::decode_vec(&got.sp_cert).expect("the certificate's PEM");
    assert_eq!(
        got.sp_metadata,
        sp_metadata_xml(&got.sp_entity_id, BASE, &der).as_bytes()
    );
    assert_eq!(
        got.forward_envs,
        [
            "MELLON_IDP",
            "MELLON_NAME_ID",
            "MELLON_EMAIL",
            "MELLON_GROUPS"
        ]
    );
    assert_eq!(
        got.strip_headers,
        [
            "MELLON-EMAIL",
            "MELLON-GROUPS",
            "MELLON-IDP",
            "MELLON-NAME-ID",
            "MELLON_EMAIL",
            "MELLON_GROUPS",
            "MELLON_IDP",
            "MELLON_NAME_ID"
        ]
    );
    assert_eq!(got.stale, None);
    assert_eq!(
        got.size(),
        got.idp_metadata.len() + got.sp_metadata.len() + got.sp_key.len() + got.sp_cert.len()
    );
}

#[test]
fn the_sp_metadata_is_mellons_entity_descriptor() {
    let got = sp_metadata_xml("https://k/x/metadata", "https://k/x", &[1, 2, 3]);
    let key = |usage: &str| {
        format!(
            "    <KeyDescriptor use=\"{usage}\">
      <ds:KeyInfo xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\">
        <ds:X509Data>
          <ds:X509Certificate>AQID</ds:X509Certificate>
        </ds:X509Data>
      </ds:KeyInfo>
    </KeyDescriptor>"
        )
    };
    let want = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>
<EntityDescriptor xmlns=\"urn:oasis:names:tc:SAML:2.0:metadata\" entityID=\"https://k/x/metadata\">
  <SPSSODescriptor AuthnRequestsSigned=\"false\" WantAssertionsSigned=\"true\" protocolSupportEnumeration=\"urn:oasis:names:tc:SAML:2.0:protocol\">
{}
{}
    <SingleLogoutService Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect\" Location=\"https://k/x/logout\"/>
    <AssertionConsumerService index=\"0\" isDefault=\"true\" Binding=\"urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" Location=\"https://k/x/postResponse\"/>
  </SPSSODescriptor>
</EntityDescriptor>
",
        key("signing"),
        key("encryption")
    );
    assert_eq!(got, want);
    let escaped = sp_metadata_xml("https://k/?a=1&b=2", "https://k/?a=1&b=2", &[]);
    assert!(
        escaped.contains("entityID=\"https://k/?a=1&amp;b=2\""),
        "{escaped}"
    );
    assert_eq!(
        super::super::idp_metadata::entity_id(escaped.as_bytes()).as_deref(),
        Ok("https://k/?a=1&b=2"),
        "the metadata stays well-formed"
    );
}

#[test]
fn the_sp_endpoints_follow_the_public_keystone_endpoint() {
    let gateway = json!({"parentRef": {"name": "gw"}, "hostname": "id.example.com"});
    let cases = [
        (
            "a gateway",
            keystone_with(json!({"gateway": gateway})),
            "https://id.example.com",
        ),
        (
            "a gateway and a public endpoint",
            keystone_with(json!({"gateway": gateway,
                "bootstrap": {"publicEndpoint": "https://keystone.example.com/v3"}})),
            "https://keystone.example.com",
        ),
        (
            "no gateway",
            keystone(),
            "http://ks.ns.svc.cluster.local:5000",
        ),
    ];
    for (case, keystone, host) in cases {
        let got = render_on(
            &FakeCluster::new(),
            &keystone,
            &Idp::default(),
            &backend(json!({})),
        )
        .expect("renders");
        let want = format!(
            "{host}/v3/OS-FEDERATION/identity_providers/adfs/protocols/mapped/auth/mellon/metadata"
        );
        assert_eq!(got.sp_entity_id, want, "{case}");
    }
}

#[test]
fn render_faults_skip_the_backend() {
    let mut mapping = backend(json!({}));
    mapping.spec.mappings[0].remote[1].type_ = "HTTP_X\r".to_owned();
    let injected = |field: &str| {
        Some(format!(
            "{field} contains a newline, carriage-return or double-quote character"
        ))
    };
    let cases = [
        ("valid", backend(json!({})), None),
        (
            "a newline in the IdP entity id",
            backend(json!({"idpEntityID": "urn:a\nb"})),
            injected("spec.saml.idpEntityID"),
        ),
        (
            "a double quote in a forwarded attribute",
            backend(json!({"forwardAttributes": ["email", "a\"b"]})),
            injected("spec.saml.forwardAttributes[1]"),
        ),
        (
            "a carriage return in the protocol id",
            backend(json!({"protocolID": "saml\r"})),
            injected("spec.saml.protocolID"),
        ),
        (
            "a carriage return in a mapping's remote type",
            mapping,
            injected("spec.mappings[0].remote[1].type"),
        ),
        (
            "a SAML backend without its block",
            serde_json::from_value(json!({"metadata": {"name": "corp-saml"},
                "spec": {"type": "SAML"}}))
            .expect("a backend"),
            Some("backend has type \"SAML\" but no saml block".to_owned()),
        ),
    ];
    for (case, backend, want) in cases {
        let cluster = FakeCluster::new();
        let got = render_on(&cluster, &keystone(), &Idp::default(), &backend);
        assert_eq!(got.err(), want, "{case}");
        if want.is_some() {
            assert!(
                cluster.write_log().is_empty(),
                "{case}: {:?}",
                cluster.write_log()
            );
        }
    }
}

#[test]
fn the_sp_keypair_is_made_even_while_the_idp_metadata_is_unavailable() {
    let url = "https://idp.example.com/metadata";
    let cluster = FakeCluster::new();
    let idp = Idp::default().failing(url, refused(url));
    let backend = backend(json!({"idpMetadata": {"url": url}}));
    let got = render_on(&cluster, &keystone(), &idp, &backend);
    assert_eq!(
        got.err().as_deref(),
        Some(
            "provider metadata unavailable: https://idp.example.com/metadata is outside the \
             operator's declared egress; set spec.saml.idpMetadata.inline or \
             spec.saml.idpMetadata.secretRef instead"
        )
    );
    assert_eq!(cluster.write_log(), ["create Secret ns/ks-saml-sp"]);
}
