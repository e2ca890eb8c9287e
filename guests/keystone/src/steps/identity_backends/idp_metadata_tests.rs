use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::steps::identity_backends::metadata::testing::{Idp, refused};
use crate::testing::{keystone, owned, pass, secret};

const ENTITY: &str = "https://idp.example.com/saml";
const URL: &str = "https://idp.example.com/saml/metadata";

/// IdP metadata naming `entity`.
fn document(entity: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<!-- the IdP -->\n\
         <md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" \
         entityID=\"{entity}\">\n  <md:IDPSSODescriptor>\n    <ds:X509Certificate>MIIB\
         </ds:X509Certificate>\n  </md:IDPSSODescriptor>\n</md:EntityDescriptor>\n"
    )
}

#[test]
fn the_entity_id_is_read_from_the_single_entity_descriptor_of_a_balanced_document() {
    let cases: [(&str, String, Result<&str, &str>); 15] = [
        (
            "valid: prefixed, with a prolog",
            document(ENTITY),
            Ok(ENTITY),
        ),
        (
            "unprefixed, single quotes, an entity, CDATA, self-closing children",
            "\u{feff}<EntityDescriptor ID='x' entityID='urn:a&amp;b&#x21;&#33;'>\
             <![CDATA[<not a tag>]]><Extensions/></EntityDescriptor>"
                .to_owned(),
            Ok("urn:a&b!!"),
        ),
        (
            "a self-closing root",
            "<EntityDescriptor entityID=\"urn:x\"/>".to_owned(),
            Ok("urn:x"),
        ),
        (
            "an aggregate",
            "<EntitiesDescriptor><EntityDescriptor entityID=\"urn:x\"/></EntitiesDescriptor>"
                .to_owned(),
            Err("expected a single EntityDescriptor, got \"EntitiesDescriptor\""),
        ),
        (
            "no entityID",
            "<EntityDescriptor ID=\"x\"></EntityDescriptor>".to_owned(),
            Err("EntityDescriptor carries no entityID attribute"),
        ),
        (
            "an empty entityID",
            "<EntityDescriptor entityID=\"\"/>".to_owned(),
            Err("EntityDescriptor carries no entityID attribute"),
        ),
        (
            "a truncated document",
            document(ENTITY)[..120].to_owned(),
            Err("parsing SAML metadata XML: unexpected end of the document"),
        ),
        (
            "a mismatched end tag",
            "<EntityDescriptor entityID=\"urn:x\"><a></b></EntityDescriptor>".to_owned(),
            Err("parsing SAML metadata XML: unexpected end tag </b>"),
        ),
        (
            "a DOCTYPE",
            "<!DOCTYPE x [<!ENTITY e \"boom\">]><EntityDescriptor entityID=\"&e;\"/>".to_owned(),
            Err("parsing SAML metadata XML: a DOCTYPE or declaration is not allowed"),
        ),
        (
            "content after the root",
            "<EntityDescriptor entityID=\"urn:x\"/>trailing".to_owned(),
            Err("parsing SAML metadata XML: content after the root element"),
        ),
        (
            "two roots",
            "<EntityDescriptor entityID=\"urn:x\"/><EntityDescriptor entityID=\"urn:y\"/>"
                .to_owned(),
            Err("parsing SAML metadata XML: more than one root element"),
        ),
        (
            "an unquoted attribute",
            "<EntityDescriptor entityID=urn:x/>".to_owned(),
            Err("parsing SAML metadata XML: an unquoted attribute value in <EntityDescriptor>"),
        ),
        (
            "an unknown entity",
            "<EntityDescriptor entityID=\"a&nbsp;b\"/>".to_owned(),
            Err("parsing SAML metadata XML: an unknown entity reference &nbsp;"),
        ),
        (
            "JSON",
            "{\"issuer\": \"x\"}".to_owned(),
            Err("parsing SAML metadata XML: text outside the root element"),
        ),
        (
            "nothing",
            "  ".to_owned(),
            Err("parsing SAML metadata XML: no root element"),
        ),
    ];
    for (case, doc, want) in cases {
        let got = entity_id(doc.as_bytes());
        assert_eq!(got.as_deref().map_err(String::as_str), want, "{case}");
    }
    assert_eq!(
        entity_id(b"<EntityDescriptor entityID=\"\xff\"/>"),
        Err("parsing SAML metadata XML: the document is not UTF-8".to_owned())
    );
}

/// The SAML backend `corp-saml` of `ENTITY` with `metadata` as its `idpMetadata`.
fn backend(metadata: Value) -> IdentityBackend {
    serde_json::from_value(json!({
        "metadata": {"name": "corp-saml", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "SAML",
                 "saml": {"idpEntityID": ENTITY, "idpMetadata": metadata}}}))
    .expect("a backend")
}

/// What `resolve` makes of `metadata` on `cluster` with `idp`: the document and the stale
/// note, or the fault's message.
fn resolved(
    cluster: &FakeCluster,
    idp: &Idp,
    metadata: Value,
) -> Result<(String, Option<String>), String> {
    let backend = backend(metadata);
    let mut pass = pass(cluster, &keystone());
    pass.probe = idp;
    let s = backend.spec.saml.as_ref().expect("a saml block");
    resolve(&pass, &backend, s)
        .expect("a fault is not an error")
        .map(|o| (String::from_utf8(o.document).expect("text"), o.stale))
        .map_err(|f| f.to_string())
}

#[test]
fn each_source_yields_its_document_when_it_names_the_spec_entity() {
    let doc = document(ENTITY);
    let cluster = FakeCluster::new().with(secret("idp-meta", &[("idp-metadata.xml", &doc)]));
    let idp = Idp::default().answering(URL, 200, doc.as_bytes());
    for (case, metadata) in [
        ("inline", json!({"inline": doc})),
        ("secretRef", json!({"secretRef": {"name": "idp-meta"}})),
        ("url", json!({"url": URL})),
    ] {
        assert_eq!(
            resolved(&cluster, &idp, metadata),
            Ok((doc.clone(), None)),
            "{case}"
        );
    }
    assert_eq!(idp.asked(), [URL], "only the url source fetches");
}

#[test]
fn metadata_that_cannot_be_had_or_names_another_entity_is_a_fault() {
    let other = document("https://evil.example.com/LEAKED");
    let unavailable = format!("provider metadata unavailable: fetching {URL} failed");
    let cases = [
        (
            "valid: a fetched document",
            Idp::default().answering(URL, 200, document(ENTITY).as_bytes()),
            json!({"url": URL}),
            None,
        ),
        (
            "a 404",
            Idp::default().answering(URL, 404, b"LEAKED"),
            json!({"url": URL}),
            Some(unavailable.clone()),
        ),
        (
            "a fetched body that is not metadata",
            Idp::default().answering(URL, 200, b"<html>LEAKED"),
            json!({"url": URL}),
            Some(unavailable),
        ),
        (
            "a fetched document of another entity",
            Idp::default().answering(URL, 200, other.as_bytes()),
            json!({"url": URL}),
            Some(format!(
                "provider metadata unavailable: document entityID does not match spec \
                 idpEntityID \"{ENTITY}\""
            )),
        ),
        (
            "a destination outside the declared egress",
            Idp::default().failing(URL, refused(URL)),
            json!({"url": URL}),
            Some(format!(
                "provider metadata unavailable: {URL} is outside the operator's declared \
                 egress; set spec.saml.idpMetadata.inline or spec.saml.idpMetadata.secretRef \
                 instead"
            )),
        ),
        (
            "inline metadata of another entity",
            Idp::default(),
            json!({"inline": other}),
            Some(format!(
                "provider metadata unavailable: IdP metadata entityID does not match \
                 spec.saml.idpEntityID \"{ENTITY}\""
            )),
        ),
        (
            "inline metadata that does not parse",
            Idp::default(),
            json!({"inline": "<EntitiesDescriptor/>"}),
            Some(
                "provider metadata unavailable: parsing IdP metadata for backend corp-saml: \
                 expected a single EntityDescriptor, got \"EntitiesDescriptor\""
                    .to_owned(),
            ),
        ),
        (
            "a missing metadata Secret",
            Idp::default(),
            json!({"secretRef": {"name": "idp-meta"}}),
            Some("getting Secret ns/idp-meta: not found".to_owned()),
        ),
        (
            "no source",
            Idp::default(),
            json!({}),
            Some("spec.saml.idpMetadata has no source".to_owned()),
        ),
    ];
    for (case, idp, metadata, want) in cases {
        let got = resolved(&FakeCluster::new(), &idp, metadata);
        match want {
            None => assert!(got.is_ok(), "{case}: {got:?}"),
            Some(want) => {
                let message = got.expect_err(case);
                assert_eq!(message, want, "{case}");
                let fetched = !case.starts_with("inline");
                assert!(
                    !(fetched && message.contains("LEAKED")),
                    "{case}: echoes the body"
                );
            }
        }
    }
}

#[test]
fn a_failed_fetch_reuses_the_last_known_good_metadata_of_the_same_entity() {
    let federation_secret = |doc: &str| {
        let mut s = owned(secret(
            "ks-federation-abcd",
            &[("corp-saml.idp-metadata.xml", doc)],
        ));
        s["metadata"]["labels"] = json!({"cobaltcore.c5c3.io/config-base": "ks-federation"});
        s
    };
    let idp = Idp::default().answering(URL, 502, b"");
    let good = document(ENTITY);
    let cluster = FakeCluster::new().with(federation_secret(&good));
    let note = format!(
        "Identity backend corp-saml: IdP metadata unavailable (provider metadata unavailable: \
         fetching {URL} failed); reusing the last-known-good document so federation stays up"
    );
    assert_eq!(
        resolved(&cluster, &idp, json!({"url": URL})),
        Ok((good, Some(note)))
    );
    let cluster = FakeCluster::new().with(federation_secret(&document("urn:old")));
    assert_eq!(
        resolved(&cluster, &idp, json!({"url": URL})),
        Err(format!(
            "provider metadata unavailable: fetching {URL} failed"
        )),
        "a copy of another entity is not reused"
    );
}
