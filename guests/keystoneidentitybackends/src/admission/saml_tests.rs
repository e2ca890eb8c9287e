use serde_json::json;

use super::RESERVED_SECTIONS;
use crate::admission::tests::{assert_create_table, create_errors_among, saml, with};

const METADATA: &str = "<md:EntityDescriptor xmlns:md=\"urn:oasis:names:tc:SAML:2.0:metadata\" \
                        entityID=\"https://idp.example.com/saml\"/>";

#[test]
fn the_saml_block_refuses_injections_bad_attributes_and_reserved_protocols() {
    assert_create_table(
        saml,
        &[
            (&[], &[]),
            (
                &[("/spec/saml/idpEntityID", json!(""))],
                &["spec.saml.idpEntityID: Required value: idpEntityID must be set"],
            ),
            (
                &[("/spec/saml/identityProviderName", json!("saml\"x"))],
                &[
                    "spec.saml.identityProviderName: Invalid value: \"saml\\\"x\": value must not contain newline, carriage-return, or double-quote characters",
                ],
            ),
            (
                &[("/spec/saml/remoteIDAttribute", json!("MELLON_IDP"))],
                &[
                    "spec.saml.remoteIDAttribute: Invalid value: \"MELLON_IDP\": remoteIDAttribute must match ^HTTP_[A-Za-z0-9_]+$ (it is conveyed to keystone as a request header across the sidecar hop)",
                ],
            ),
            (
                &[("/spec/saml/protocolID", json!("openid"))],
                &[
                    "spec.saml.protocolID: Invalid value: \"openid\": protocolID \"openid\" collides with the operator-owned keystone.conf section of the same name",
                ],
            ),
            (
                &[(
                    "/spec/saml/forwardAttributes",
                    json!(["uid", "mail-addr", "uid"]),
                )],
                &[
                    "spec.saml.forwardAttributes[1]: Invalid value: \"mail-addr\": forwardAttributes entry must match ^[A-Za-z0-9_]+$ (it renders into Apache header directives)",
                    "spec.saml.forwardAttributes[2]: Duplicate value: \"uid\"",
                ],
            ),
            (
                &[(
                    "/spec/saml/sp",
                    json!({"certificateSecretRef": {"name": "sp", "key": "tls.crt"}}),
                )],
                &[
                    "spec.saml.sp.certificateSecretRef.key: Invalid value: \"tls.crt\": key must be empty: the SP certificate Secret's data keys are fixed (\"tls.crt\" and \"tls.key\")",
                ],
            ),
        ],
    );
}

#[test]
fn the_idp_metadata_comes_from_exactly_one_trusted_source() {
    assert_create_table(
        saml,
        &[
            (
                &[("/spec/saml/idpMetadata", json!({"inline": METADATA}))],
                &[],
            ),
            (
                &[("/spec/saml/idpMetadata", json!({}))],
                &[
                    "spec.saml.idpMetadata: Invalid value: 0: exactly one of inline, secretRef, or url must be set",
                ],
            ),
            (
                &[("/spec/saml/idpMetadata/secretRef", json!({"name": "idp"}))],
                &[
                    "spec.saml.idpMetadata: Invalid value: 2: exactly one of inline, secretRef, or url must be set",
                ],
            ),
            (
                &[("/spec/saml/idpMetadata/url", json!("http://idp/metadata"))],
                &[
                    "spec.saml.idpMetadata.url: Invalid value: \"http://idp/metadata\": url must use https:// (the IdP metadata carries the assertion-signing certificate; a plaintext fetch lets an on-path attacker substitute the trust anchor)",
                ],
            ),
            (
                &[(
                    "/spec/saml/idpMetadata",
                    json!({"secretRef": {"name": "idp", "key": "metadata.xml"}}),
                )],
                &[
                    "spec.saml.idpMetadata.secretRef.key: Invalid value: \"metadata.xml\": key must be empty: the metadata Secret's data key is fixed (\"idp-metadata.xml\")",
                ],
            ),
            (
                &[(
                    "/spec/saml/idpMetadata",
                    json!({"inline": "<EntitiesDescriptor/>"}),
                )],
                &[
                    "spec.saml.idpMetadata.inline: Invalid value: \"<xml>\": inline IdP metadata is not a single SAML EntityDescriptor: expected a single EntityDescriptor, got \"EntitiesDescriptor\"",
                ],
            ),
            (
                &[(
                    "/spec/saml/idpMetadata",
                    json!({"inline": METADATA.replace("https://idp.example.com/saml", "urn:other")}),
                )],
                &[
                    "spec.saml.idpMetadata.inline: Invalid value: \"urn:other\": inline IdP metadata entityID \"urn:other\" does not match spec.saml.idpEntityID \"https://idp.example.com/saml\"",
                ],
            ),
        ],
    );
}

#[test]
fn no_keystone_conf_section_the_keystone_renders_is_a_valid_protocol_id() {
    for section in RESERVED_SECTIONS {
        let object = with(saml(), &[("/spec/saml/protocolID", json!(section))]);
        let errors = create_errors_among(&[], object);
        assert_eq!(
            errors,
            [format!(
                "spec.saml.protocolID: Invalid value: {section:?}: protocolID {section:?} collides with the operator-owned keystone.conf section of the same name"
            )],
        );
    }
}
