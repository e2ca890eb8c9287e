use super::*;

fn status_of(conditions: &[Condition], type_: &str) -> (String, String) {
    let c = find(conditions, type_).expect("set");
    (c.status.clone(), c.reason.clone())
}

#[test]
fn a_true_condition_is_not_demoted_by_a_failed_observation_but_by_a_finding() {
    // (condition, reason of the False, stays True)
    let table = [
        (DOMAIN_READY, WAITING_FOR_KEYSTONE_API, true),
        (DOMAIN_READY, ADMIN_SECRET_UNAVAILABLE, true),
        (DOMAIN_READY, IDENTITY_API_ERROR, true),
        (FEDERATION_OBJECTS_READY, IDENTITY_API_ERROR, true),
        (MAPPINGS_READY, IDENTITY_API_ERROR, true),
        (DOMAIN_READY, KEYSTONE_NOT_FOUND, false),
        (DOMAIN_READY, DOMAIN_ALREADY_EXISTS, false),
        (MAPPINGS_READY, ROLE_OR_PROJECT_NOT_FOUND, false),
        (FEDERATION_OBJECTS_READY, NO_MAPPING_RULES, false),
        // ConfigProjected is set directly, whatever the reason.
        (CONFIG_PROJECTED, IDENTITY_API_ERROR, false),
    ];
    for (type_, reason, stays) in table {
        let mut conditions = Vec::new();
        set(&mut conditions, 1, type_, true, "Provisioned", "fine");
        set(&mut conditions, 2, type_, false, reason, "not fine");
        let expected = if stays {
            (TRUE.to_owned(), "Provisioned".to_owned())
        } else {
            (FALSE.to_owned(), reason.to_owned())
        };
        assert_eq!(status_of(&conditions, type_), expected, "{type_} {reason}");
    }
}

#[test]
fn a_failed_observation_sets_a_condition_that_is_not_true() {
    for existing in [None, Some(false)] {
        let mut conditions = Vec::new();
        if let Some(ready) = existing {
            set(
                &mut conditions,
                1,
                DOMAIN_READY,
                ready,
                KEYSTONE_NOT_FOUND,
                "gone",
            );
        }
        set(
            &mut conditions,
            2,
            DOMAIN_READY,
            false,
            WAITING_FOR_KEYSTONE_API,
            "wait",
        );
        assert_eq!(
            status_of(&conditions, DOMAIN_READY),
            (FALSE.to_owned(), WAITING_FOR_KEYSTONE_API.to_owned())
        );
        assert_eq!(
            find(&conditions, DOMAIN_READY).unwrap().observed_generation,
            Some(2)
        );
    }
}

#[test]
fn ready_aggregates_the_sub_conditions_of_the_backends_type() {
    let backend = |type_: &str| -> KeystoneIdentityBackend {
        serde_json::from_value(serde_json::json!({"metadata": {"generation": 7},
                                                  "spec": {"type": type_}}))
        .expect("a backend")
    };
    // (type, sub-conditions True, Ready)
    let table = [
        ("LDAP", vec![DOMAIN_READY, CONFIG_PROJECTED], TRUE),
        ("LDAP", vec![DOMAIN_READY], FALSE),
        ("OIDC", vec![DOMAIN_READY, CONFIG_PROJECTED], FALSE),
        (
            "SAML",
            vec![DOMAIN_READY, CONFIG_PROJECTED, FEDERATION_OBJECTS_READY],
            FALSE,
        ),
        (
            "OIDC",
            vec![
                DOMAIN_READY,
                CONFIG_PROJECTED,
                FEDERATION_OBJECTS_READY,
                MAPPINGS_READY,
            ],
            TRUE,
        ),
    ];
    for (type_, trues, ready) in table {
        let mut b = backend(type_);
        let status = b.status.get_or_insert_with(Default::default);
        for t in &trues {
            set(&mut status.conditions, 7, t, true, "R", "m");
        }
        finish(&mut b);
        let status = b.status.expect("a status");
        let c = find(&status.conditions, "Ready").expect("Ready");
        assert_eq!(c.status, ready, "{type_} {trues:?}");
        assert_eq!(
            (c.observed_generation, status.observed_generation),
            (Some(7), 7)
        );
    }
}
