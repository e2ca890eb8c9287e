//! The Keystone stand-in against the real Keystone: Debian's `python3-keystone` (22.0.2) on
//! sqlite, set up once for this test binary by `tests/keystone/setup-keystone.sh`. Each
//! test sends the same requests to both and compares status codes and JSON shapes (key
//! sets and value types, so ids and timestamps do not matter) and, for errors, the title.
//!
//! A missing package fails the suite: `apt-get install python3-keystone`.

#[path = "support/mod.rs"]
mod support;

#[path = "keystone/harness.rs"]
mod harness;

use serde_json::json;

use harness::{Both, PASSWORD, shape, tag};
use support::http::send;
use support::keystone::password_auth;

#[tokio::test]
async fn the_version_document_and_password_tokens_match_keystone() {
    let mut both = Both::new().await;
    let version = both.step("GET", "", None).await;
    assert_eq!(
        version.0.body["version"]["id"],
        version.1.body["version"]["id"]
    );
    let issued = both
        .step("POST", "/auth/tokens", Some(password_auth(PASSWORD)))
        .await;
    assert_eq!(issued.0.status, 201);
    assert_eq!(
        issued.0.body["token"]["roles"].as_array().map(Vec::len),
        issued.1.body["token"]["roles"].as_array().map(Vec::len)
    );
    let wrong = both
        .step("POST", "/auth/tokens", Some(password_auth("wrong")))
        .await;
    assert_eq!(wrong.0.status, 401);
    assert_eq!(
        wrong.0.body["error"]["message"],
        wrong.1.body["error"]["message"]
    );
    let mut nobody = password_auth(PASSWORD);
    nobody["auth"]["identity"]["password"]["user"]["name"] = json!("nobody");
    assert_eq!(
        both.step("POST", "/auth/tokens", Some(nobody))
            .await
            .0
            .status,
        401
    );
    let unscoped = json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": PASSWORD}}}}});
    assert_eq!(
        both.step("POST", "/auth/tokens", Some(unscoped))
            .await
            .0
            .status,
        201
    );
}

#[tokio::test]
async fn the_domain_lifecycle_matches_keystone() {
    let mut both = Both::new().await;
    let name = format!("ldap-{}", tag());
    let absent = both
        .step("GET", &format!("/domains?name={name}"), None)
        .await;
    assert_eq!(absent.0.body["domains"], json!([]));
    let created = both
        .step(
            "POST",
            "/domains",
            Some(json!({"domain": {"name": name, "description": "LDAP"}})),
        )
        .await;
    assert_eq!(created.0.status, 201);
    both.remember("domain", &created, "/domain/id");
    let bare = both
        .step(
            "POST",
            "/domains",
            Some(json!({"domain": {"name": format!("{name}-bare")}})),
        )
        .await;
    assert_eq!(
        bare.0.body["domain"]["description"],
        bare.1.body["domain"]["description"]
    );
    let twice = both
        .step("POST", "/domains", Some(json!({"domain": {"name": name}})))
        .await;
    assert_eq!(twice.0.status, 409);
    assert_eq!(
        twice.0.body["error"]["message"],
        twice.1.body["error"]["message"]
    );
    assert_eq!(
        both.step("POST", "/domains", Some(json!({"domain": {}})))
            .await
            .0
            .status,
        400
    );
    let listed = both
        .step("GET", &format!("/domains?name={name}"), None)
        .await;
    assert_eq!(listed.0.body["domains"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        both.step("GET", "/domains/{domain}", None).await.0.status,
        200
    );
    let refused = both.step("DELETE", "/domains/{domain}", None).await;
    assert_eq!(refused.0.status, 403);
    assert_eq!(
        refused.0.body["error"]["message"],
        refused.1.body["error"]["message"]
    );
    let patched = both
        .step(
            "PATCH",
            "/domains/{domain}",
            Some(json!({"domain": {"enabled": false, "description": "off"}})),
        )
        .await;
    assert_eq!(patched.0.status, 200);
    assert_eq!(
        both.step("DELETE", "/domains/{domain}", None)
            .await
            .0
            .status,
        204
    );
    let gone = both.step("GET", "/domains/{domain}", None).await;
    assert_eq!(gone.0.status, 404);
    assert_eq!(
        both.step("DELETE", "/domains/{domain}", None)
            .await
            .0
            .status,
        404
    );
}

#[tokio::test]
async fn the_federation_objects_match_keystone() {
    let mut both = Both::new().await;
    let t = tag();
    let domain = both
        .step(
            "POST",
            "/domains",
            Some(json!({"domain": {"name": format!("oidc-{t}")}})),
        )
        .await;
    both.remember("domain", &domain, "/domain/id");
    let (idp, mapping) = (format!("idp-{t}"), format!("idp-{t}-mapping"));
    let idp_body = json!({"identity_provider": {"remote_ids": [format!("https://idp-{t}.example")], "enabled": true,
                                                  "domain_id": "{domain}", "description": "OIDC"}});
    let created = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            Some(idp_body.clone()),
        )
        .await;
    assert_eq!(created.0.status, 201);
    assert_eq!(
        both.step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            Some(idp_body)
        )
        .await
        .0
        .status,
        409
    );
    let rules = json!({"mapping": {"rules": [{"local": [{"user": {"name": "{0}"}}], "remote": [{"type": "OIDC-preferred_username"}]}]}});
    let mapped = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/mappings/{mapping}"),
            Some(rules.clone()),
        )
        .await;
    assert_eq!(mapped.0.status, 201);
    let bad = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            Some(json!({"protocol": {"mapping_id": "no-such-mapping"}})),
        )
        .await;
    assert_eq!(bad.0.status, 400);
    let protocol = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            Some(json!({"protocol": {"mapping_id": mapping}})),
        )
        .await;
    assert_eq!(protocol.0.status, 201);
    assert_eq!(
        both.step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            None
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols"),
            None
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "PATCH",
            &format!("/OS-FEDERATION/mappings/{mapping}"),
            Some(rules)
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "PATCH",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            Some(json!({"identity_provider": {"enabled": false}}))
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers?id={idp}"),
            None
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "DELETE",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            None
        )
        .await
        .0
        .status,
        204
    );
    assert_eq!(
        both.step(
            "DELETE",
            &format!("/OS-FEDERATION/mappings/{mapping}"),
            None
        )
        .await
        .0
        .status,
        204
    );
    assert_eq!(
        both.step(
            "DELETE",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            None
        )
        .await
        .0
        .status,
        204
    );
    let gone = both
        .step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            None,
        )
        .await;
    assert_eq!(gone.0.status, 404);
    assert_eq!(
        gone.0.body["error"]["message"],
        gone.1.body["error"]["message"]
    );
}

#[tokio::test]
async fn groups_roles_projects_and_role_assignments_match_keystone() {
    let mut both = Both::new().await;
    let t = tag();
    let group = both.step("POST", "/groups", Some(json!({"group": {"name": format!("admins-{t}"), "domain_id": "default", "description": "g"}}))).await;
    assert_eq!(group.0.status, 201);
    both.remember("group", &group, "/group/id");
    let twice = both
        .step(
            "POST",
            "/groups",
            Some(json!({"group": {"name": format!("admins-{t}"), "domain_id": "default"}})),
        )
        .await;
    assert_eq!(twice.0.status, 409);
    both.step(
        "GET",
        &format!("/groups?name=admins-{t}&domain_id=default"),
        None,
    )
    .await;
    let bare = both
        .step(
            "POST",
            "/groups",
            Some(json!({"group": {"name": format!("bare-{t}"), "domain_id": "default"}})),
        )
        .await;
    assert_eq!(bare.0.status, 201);
    let member = both.step("GET", "/roles?name=member", None).await;
    both.remember("role", &member, "/roles/0/id");
    let role = both
        .step(
            "POST",
            "/roles",
            Some(json!({"role": {"name": format!("operator-{t}")}})),
        )
        .await;
    assert_eq!(role.0.status, 201);
    let project = both
        .step(
            "POST",
            "/projects",
            Some(json!({"project": {"name": format!("tenant-{t}"), "domain_id": "default"}})),
        )
        .await;
    assert_eq!(project.0.status, 201);
    both.remember("project", &project, "/project/id");
    both.step(
        "GET",
        &format!("/projects?name=tenant-{t}&domain_id=default"),
        None,
    )
    .await;
    let assign = "/projects/{project}/groups/{group}/roles/{role}";
    assert_eq!(both.step("PUT", assign, None).await.0.status, 204);
    assert_eq!(both.step("HEAD", assign, None).await.0.status, 204);
    assert_eq!(
        both.step("PUT", "/domains/default/groups/{group}/roles/{role}", None)
            .await
            .0
            .status,
        204
    );
    let listed = both
        .step("GET", "/role_assignments?group.id={group}", None)
        .await;
    assert_eq!(
        listed.0.body["role_assignments"].as_array().map(Vec::len),
        Some(2)
    );
    both.step(
        "GET",
        "/role_assignments?scope.project.id={project}&role.id={role}",
        None,
    )
    .await;
    assert_eq!(
        both.step(
            "PUT",
            "/projects/{project}/groups/{group}/roles/no-such-role",
            None
        )
        .await
        .0
        .status,
        404
    );
    assert_eq!(both.step("DELETE", assign, None).await.0.status, 204);
    let again = both.step("DELETE", assign, None).await;
    assert_eq!(again.0.status, 404);
    assert_eq!(
        both.step("DELETE", "/groups/{group}", None).await.0.status,
        204
    );
    assert_eq!(
        both.step("GET", "/groups/{group}", None).await.0.status,
        404
    );
}

#[tokio::test]
async fn calls_without_a_token_are_refused_like_keystone() {
    let both = Both::new().await;
    for side in [&both.real, &both.stand_in] {
        let answer = send("GET", &format!("{}/v3/domains", side.base), &[], None).await;
        assert_eq!(answer.status, 401, "{}", side.base);
        assert_eq!(
            shape(&answer.body),
            json!({"error": {"code": "number", "message": "string", "title": "string"}})
        );
    }
}
