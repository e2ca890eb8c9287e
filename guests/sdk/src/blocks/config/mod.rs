//! Configuration files for OpenStack services: INI rendering, and immutable ConfigMaps
//! and Secrets named by a hash of their content, with the pruning of their history.
//!
//! - [`ini`]: render sections to INI text; merge operator defaults with user config.
//! - [`configmap`]: [`create_immutable_config_map`] and the content hash behind its name.
//! - [`secret`]: [`create_immutable_secret`], the same for Secrets.
//! - [`prune`]: [`prune_immutable_config_maps`], [`prune_immutable_secrets`] and the pure
//!   selection behind both.
//! - [`immutable`]: what the two kinds share: the hash, the name, the base label.

pub mod configmap;
pub mod immutable;
pub mod ini;
pub mod prune;
pub mod secret;

pub use configmap::{CONFIG_BASE_LABEL, content_hash, create_immutable_config_map};
pub use ini::{
    MultiSections, Sections, merge_defaults, render_ini, render_ini_multi, render_sorted_pairs,
};
pub use prune::{
    PruneError, prune_immutable_config_maps, prune_immutable_secrets, select_for_pruning,
};
pub use secret::{create_immutable_secret, immutable_secret_name, secret_content_hash};
