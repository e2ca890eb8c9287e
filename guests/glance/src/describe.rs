//! What the host loads the Glance plugin with: its kind, watches, permissions.
//!
//! Least privilege: exactly what the pipeline of [`crate::reconcile`] uses.
//!
//! | Kind | Verbs | Why |
//! |---|---|---|
//! | Glance | get, list, watch, patch, update-status | the primary; patch for the remote-children finalizer of a targeted Glance |
//! | GlanceBackend | get, list, watch | the Backends step lists them; their changes (status flips included) wake the Glance they name |
//! | Secret | get, list, watch, create, patch, delete | credentials read; the connection Secret applied; immutable config and backends Secrets created, superseded ones pruned |
//! | Deployment, Service | get, list, watch, patch, delete | the workload; delete for the sweep of a target cluster |
//! | Job | get, list, watch, create, delete | the db-sync Job (re-created when its template changes) |
//! | MariaDB | get, list, watch | the database gate |
//! | Database, User, Grant | get, list, watch, patch, delete | the managed database; delete for the sweep of a target cluster |
//!
//! Targets (contract 1.3): children on a target cluster carry the owner labels under
//! `openstack.c5c3.io`; the watches of every kind it writes run there too (those of
//! MariaDB's kinds only where the target serves them).
//!
//! The GlanceBackend watch is optional: the plugin loads, and its Glances aggregate
//! nothing, while the GlanceBackend CRD is not installed.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Secret, Service};
use wasm_operator_sdk::blocks::apply::FIELD_MANAGER;
use wasm_operator_sdk::blocks::remote_children::OWNER_LABEL_PREFIX;
use wasm_operator_sdk::blocks::service::child_kinds;
use wasm_operator_sdk::external::mariadb::{Database, Grant, MariaDb, User};
use wasm_operator_sdk::{
    Description, FieldIndex, KindIndex, KindRef, Mapping, Permission, Predicate, TargetDescription,
    Verb, Watch,
};

use crate::backend::{GLANCE_REF, backend_kind};
use crate::indexes;
use crate::types::Glance;

/// The plugin's name.
pub const NAME: &str = "glance";

fn permission(kind: KindRef, verbs: &[Verb]) -> Permission {
    Permission {
        kind,
        verbs: verbs.to_vec(),
    }
}

fn owned(kind: KindRef) -> Watch {
    Watch::new(kind, Mapping::Owner)
}

/// The plugin's description.
pub fn describe() -> Description {
    use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch as W};
    let primary = KindRef::of::<Glance>();
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: FIELD_MANAGER.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged],
        watches: vec![
            owned(KindRef::of::<Secret>()),
            owned(KindRef::of::<Deployment>()),
            owned(KindRef::of::<Service>()),
            owned(KindRef::of::<Job>()),
            owned(KindRef::of::<Database>()).optional(),
            owned(KindRef::of::<User>()).optional(),
            owned(KindRef::of::<Grant>()).optional(),
            Watch::new(
                KindRef::of::<MariaDb>(),
                Mapping::FieldIndex(indexes::MARIADB.into()),
            )
            .optional(),
            // The credentials External Secrets writes.
            Watch::new(
                KindRef::of::<Secret>(),
                Mapping::FieldIndex(indexes::SECRET_REFS.into()),
            ),
            // A backend's changes, its status flips included, reach the Glance it names.
            Watch::new(backend_kind(), Mapping::Reference(GLANCE_REF.into())).optional(),
            // A backend's S3 credentials reach the Glance through the backend.
            Watch::new(
                KindRef::of::<Secret>(),
                Mapping::Via {
                    kind: backend_kind(),
                    index: indexes::BACKEND_SECRETS.into(),
                },
            ),
        ],
        indexes: vec![
            FieldIndex {
                name: indexes::MARIADB.into(),
                description: "namespace/name of the MariaDB spec.database.clusterRef names".into(),
            },
            FieldIndex {
                name: indexes::SECRET_REFS.into(),
                description: "namespace/name of the database and service-user Secrets".into(),
            },
        ],
        watched_indexes: vec![KindIndex {
            kind: backend_kind(),
            index: FieldIndex {
                name: indexes::BACKEND_SECRETS.into(),
                description: "namespace/name of the backend's S3 credentials Secret".into(),
            },
        }],
        permissions: vec![
            permission(primary, &[Get, List, W, Patch, UpdateStatus]),
            permission(backend_kind(), &[Get, List, W]),
            permission(
                KindRef::of::<Secret>(),
                &[Get, List, W, Create, Patch, Delete],
            ),
            permission(KindRef::of::<Deployment>(), &[Get, List, W, Patch, Delete]),
            permission(KindRef::of::<Service>(), &[Get, List, W, Patch, Delete]),
            permission(KindRef::of::<Job>(), &[Get, List, W, Create, Delete]),
            permission(KindRef::of::<MariaDb>(), &[Get, List, W]),
            permission(KindRef::of::<Database>(), &[Get, List, W, Patch, Delete]),
            permission(KindRef::of::<User>(), &[Get, List, W, Patch, Delete]),
            permission(KindRef::of::<Grant>(), &[Get, List, W, Patch, Delete]),
        ],
        subresources: vec![],
        egress: vec![],
        admission: vec![],
        targets: TargetDescription {
            owner_label_prefix: OWNER_LABEL_PREFIX.into(),
            watches: child_kinds().to_vec(),
        },
        primary_selector: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_glance_asks_for_what_its_pipeline_uses_and_waits_for_the_backend_kind_optionally() {
        let description = describe();
        let verbs: Vec<(String, Vec<Verb>)> = description
            .permissions
            .iter()
            .map(|p| (p.kind.kind.clone(), p.verbs.clone()))
            .collect();
        use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch as W};
        assert_eq!(
            verbs,
            [
                ("Glance".to_owned(), vec![Get, List, W, Patch, UpdateStatus]),
                ("GlanceBackend".to_owned(), vec![Get, List, W]),
                (
                    "Secret".to_owned(),
                    vec![Get, List, W, Create, Patch, Delete]
                ),
                ("Deployment".to_owned(), vec![Get, List, W, Patch, Delete]),
                ("Service".to_owned(), vec![Get, List, W, Patch, Delete]),
                ("Job".to_owned(), vec![Get, List, W, Create, Delete]),
                ("MariaDB".to_owned(), vec![Get, List, W]),
                ("Database".to_owned(), vec![Get, List, W, Patch, Delete]),
                ("User".to_owned(), vec![Get, List, W, Patch, Delete]),
                ("Grant".to_owned(), vec![Get, List, W, Patch, Delete]),
            ]
        );
        let backend = description
            .watches
            .iter()
            .find(|w| w.kind.kind == "GlanceBackend")
            .expect("the GlanceBackend watch");
        assert!(backend.optional);
        assert_eq!(backend.mapping, Mapping::Reference(GLANCE_REF.into()));
        assert!(
            description.egress.is_empty(),
            "the Glance reaches nothing over HTTP"
        );
    }

    #[test]
    fn every_kind_a_targeted_glance_sweeps_is_declared_with_list_and_delete() {
        wasm_operator_sdk::testing::assert_can_sweep(&describe(), &crate::targeting::swept());
    }
}
