//! What the host loads the Cinder plugin with: its kind, watches, permissions.
//!
//! Least privilege: exactly what the pipeline of [`crate::reconcile`] uses.
//!
//! | Kind | Verbs | Why |
//! |---|---|---|
//! | Cinder | get, list, watch, patch, update-status | the primary; patch for the remote-children finalizer of a targeted Cinder |
//! | CinderBackend | get, list, watch, patch | the Backends step lists them; their changes (status flips included) wake the Cinder they name; the service-remove finalizer is released by a patch |
//! | CinderBackupBackend | get, list, watch | the BackupBackend step lists them; their changes wake the Cinder |
//! | Secret | get, list, watch, create, patch, delete | credentials read; the connection Secret applied; immutable config, backend and backup Secrets created, superseded and stale ones deleted |
//! | Deployment | get, list, watch, patch, delete | the API, cinder-volume and cinder-backup workloads; a backend's or backup's Deployment deleted when it is no longer projected |
//! | Service | get, list, watch, patch, delete | the API's Service; delete for the sweep of a target cluster |
//! | Job | get, list, watch, create, delete | the db-sync and service-remove Jobs (re-created when their template changes) |
//! | MariaDB | get, list, watch | the database gate |
//! | Database, User, Grant | get, list, watch, patch, delete | the managed database; delete for the sweep of a target cluster |
//!
//! Targets (contract 1.3): children on a target cluster carry the owner labels under
//! `openstack.c5c3.io`; the watches of every kind it writes run there too (those of
//! MariaDB's kinds only where the target serves them). The satellites stay here.
//!
//! The satellite watches are optional: the plugin loads, and its Cinders aggregate
//! nothing, while the satellite CRDs are not installed.

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

use crate::indexes;
use crate::satellites::{CINDER_REF, backend_kind, backup_backend_kind};
use crate::types::Cinder;

/// The plugin's name.
pub const NAME: &str = "cinder";

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
    let primary = KindRef::of::<Cinder>();
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
            // A satellite's changes, its status flips included, reach the Cinder it names.
            Watch::new(backend_kind(), Mapping::Reference(CINDER_REF.into())).optional(),
            Watch::new(backup_backend_kind(), Mapping::Reference(CINDER_REF.into())).optional(),
            // A backend's RBD key reaches the Cinder through the backend.
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
                description: "namespace/name of the backend's RBD key Secret".into(),
            },
        }],
        permissions: vec![
            permission(primary, &[Get, List, W, Patch, UpdateStatus]),
            permission(backend_kind(), &[Get, List, W, Patch]),
            permission(backup_backend_kind(), &[Get, List, W]),
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
    fn the_cinder_asks_for_what_its_pipeline_uses_and_waits_for_the_backend_kind_optionally() {
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
                ("Cinder".to_owned(), vec![Get, List, W, Patch, UpdateStatus]),
                ("CinderBackend".to_owned(), vec![Get, List, W, Patch]),
                ("CinderBackupBackend".to_owned(), vec![Get, List, W]),
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
            .find(|w| w.kind.kind == "CinderBackend")
            .expect("the CinderBackend watch");
        assert!(backend.optional);
        assert_eq!(backend.mapping, Mapping::Reference(CINDER_REF.into()));
        assert!(
            description.egress.is_empty(),
            "the Cinder reaches nothing over HTTP"
        );
    }

    #[test]
    fn every_kind_a_targeted_cinder_sweeps_is_declared_with_list_and_delete() {
        wasm_operator_sdk::testing::assert_can_sweep(&describe(), &crate::targeting::swept());
    }
}
