use std::collections::BTreeMap;

use super::*;
use crate::config::fixtures::{FULL, file, keystone};

fn mw(name: &str, factory: &str, position: PipelinePosition) -> MiddlewareSpec {
    MiddlewareSpec {
        name: name.into(),
        filter_factory: factory.into(),
        position,
        config: BTreeMap::new(),
    }
}

#[test]
fn without_middleware_the_pipeline_is_keystones_own() {
    let expected = file(&[
        "[app:admin_service]",
        "use = egg:keystone#service_v3",
        "",
        "[composite:main]",
        "/v3 = public_api",
        "use = egg:Paste#urlmap",
        "",
        "[filter:cors]",
        "oslo_config_project = keystone",
        "use = egg:oslo.middleware#cors",
        "",
        "[filter:http_proxy_to_wsgi]",
        "use = egg:oslo.middleware#http_proxy_to_wsgi",
        "",
        "[filter:request_id]",
        "use = egg:oslo.middleware#request_id",
        "",
        "[filter:sizelimit]",
        "use = egg:oslo.middleware#sizelimit",
        "",
        "[filter:url_normalize]",
        "use = egg:keystone#url_normalize",
        "",
        "[pipeline:public_api]",
        "pipeline = cors sizelimit http_proxy_to_wsgi url_normalize request_id admin_service",
    ]);
    assert_eq!(render(&[]).expect("renders"), expected);
}

#[test]
fn middleware_goes_before_or_after_keystones_filters_with_its_own_section() {
    let middleware = keystone(FULL).spec.middleware;
    let expected = file(&[
        "[app:admin_service]",
        "use = egg:keystone#service_v3",
        "",
        "[composite:main]",
        "/v3 = public_api",
        "use = egg:Paste#urlmap",
        "",
        "[filter:audit]",
        "audit_map_file = /etc/keystone/api_audit_map.conf",
        "paste.filter_factory = keystonemiddleware.audit:filter_factory",
        "",
        "[filter:cors]",
        "oslo_config_project = keystone",
        "use = egg:oslo.middleware#cors",
        "",
        "[filter:healthcheck]",
        "paste.filter_factory = oslo_middleware:Healthcheck.factory",
        "path = /healthcheck",
        "",
        "[filter:http_proxy_to_wsgi]",
        "use = egg:oslo.middleware#http_proxy_to_wsgi",
        "",
        "[filter:request_id]",
        "use = egg:oslo.middleware#request_id",
        "",
        "[filter:sizelimit]",
        "use = egg:oslo.middleware#sizelimit",
        "",
        "[filter:url_normalize]",
        "use = egg:keystone#url_normalize",
        "",
        "[pipeline:public_api]",
        "pipeline = healthcheck cors sizelimit http_proxy_to_wsgi url_normalize request_id audit admin_service",
    ]);
    assert_eq!(render(&middleware).expect("renders"), expected);
}

#[test]
fn middleware_keeps_its_order_within_its_position() {
    let middleware = [
        mw("b1", "f:b1", PipelinePosition::Before),
        mw("a1", "f:a1", PipelinePosition::After),
        mw("b2", "f:b2", PipelinePosition::Before),
        mw("a2", "f:a2", PipelinePosition::After),
    ];
    let ini = render(&middleware).expect("renders");
    assert!(
        ini.contains(
            "pipeline = b1 b2 cors sizelimit http_proxy_to_wsgi url_normalize request_id a1 a2 admin_service\n"
        ),
        "{ini}"
    );
}

#[test]
fn invalid_middleware_is_refused_naming_the_middleware() {
    let before = PipelinePosition::Before;
    let cases: Vec<(&str, Vec<MiddlewareSpec>, Option<ApiPasteError>, &str)> = vec![
        (
            "two valid middleware",
            vec![mw("a", "f:a", before), mw("b", "f:b", before)],
            None,
            "",
        ),
        (
            "an empty name",
            vec![mw("a", "f:a", before), mw("", "f:x", before)],
            Some(ApiPasteError::EmptyName { index: 1 }),
            "api-paste.ini: spec.middleware[1]: the middleware's name must not be empty",
        ),
        (
            "an empty factory",
            vec![mw("audit", "", before)],
            Some(ApiPasteError::EmptyFactory {
                name: "audit".into(),
            }),
            "api-paste.ini: middleware \"audit\": filterFactory must not be empty",
        ),
        (
            "a duplicate name",
            vec![
                mw("audit", "f:a", before),
                mw("audit", "f:b", PipelinePosition::After),
            ],
            Some(ApiPasteError::DuplicateName {
                name: "audit".into(),
            }),
            "api-paste.ini: middleware \"audit\": the name is taken by an earlier middleware",
        ),
        (
            "the name of one of keystone's filters",
            vec![mw("cors", "f:cors", before)],
            Some(ApiPasteError::ReservedName {
                name: "cors".into(),
            }),
            "api-paste.ini: middleware \"cors\": the name is taken by keystone's own pipeline",
        ),
        (
            "the name of keystone's application",
            vec![mw("admin_service", "f:x", before)],
            Some(ApiPasteError::ReservedName {
                name: "admin_service".into(),
            }),
            "api-paste.ini: middleware \"admin_service\": the name is taken by keystone's own pipeline",
        ),
        (
            "a name of two words",
            vec![mw("audit admin_service", "f:x", before)],
            Some(ApiPasteError::NotOneWord {
                name: "audit admin_service".into(),
            }),
            "api-paste.ini: middleware \"audit admin_service\": the name must be one word (no whitespace)",
        ),
    ];
    for (case, middleware, expected, message) in cases {
        match (render(&middleware), expected) {
            (Ok(_), None) => {}
            (Err(ConfigError::ApiPaste(err)), Some(expected)) => {
                assert_eq!(err, expected, "{case}");
                assert_eq!(ConfigError::ApiPaste(err).to_string(), message, "{case}");
            }
            (got, expected) => panic!("{case}: expected {expected:?}, got {got:?}"),
        }
    }
}

#[test]
fn a_middleware_config_value_with_a_line_break_cannot_add_a_filter() {
    let mut audit = mw("audit", "f:audit", PipelinePosition::After);
    audit.config.insert(
        "audit_map_file".into(),
        "/x\n[filter:cors]\nuse = egg:evil#cors".into(),
    );
    let err = render(&[audit]).expect_err("refused");
    assert!(matches!(err, ConfigError::Line { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "api-paste.ini: [filter:audit] audit_map_file: the value contains a line break"
    );
}
