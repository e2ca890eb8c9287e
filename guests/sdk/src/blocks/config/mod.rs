//! Configuration files for OpenStack services: INI rendering, and immutable ConfigMaps
//! named by a hash of their content, with the pruning of their history.
//!
//! - [`ini`]: render sections to INI text; merge operator defaults with user config.
//! - [`configmap`]: [`create_immutable_config_map`] and the content hash behind its name.
//! - [`prune`]: [`prune_immutable_config_maps`] and the pure selection behind it.

pub mod configmap;
pub mod ini;
pub mod prune;

pub use configmap::{CONFIG_BASE_LABEL, content_hash, create_immutable_config_map};
pub use ini::{
    MultiSections, Sections, merge_defaults, render_ini, render_ini_multi, render_sorted_pairs,
};
pub use prune::{PruneError, prune_immutable_config_maps, select_for_pruning};
