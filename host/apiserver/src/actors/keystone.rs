//! PLACEHOLDER: the keystone actor is being built on its own branch; this file is replaced there.

use super::{Actor, ActorContext, ActorError, Started};

pub(crate) async fn start(_ctx: ActorContext) -> Result<Started, ActorError> {
    Err(ActorError::Start {
        actor: Actor::Keystone,
        message: "not built yet".into(),
    })
}
