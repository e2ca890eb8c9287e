//! Canaries: the second version `plugins.toml` routes some primaries to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasm_operator_types::LabelSelector;

use super::super::plugin_config::PluginSettings;
use super::{PluginDirectory, look};
use crate::controller::plugin_controller::{Canary, same_shape};
use crate::operator::loader::{self, PluginFile};
use wasm_operator_runtime::LoadError;

impl PluginDirectory {
    /// Sets, replaces or clears each controller's canary from `plugins.toml`.
    pub(super) async fn refresh_canaries(&mut self, refusals: &mut Vec<(PathBuf, String)>) {
        let stems: Vec<String> = self.serving.keys().cloned().collect();
        for stem in stems {
            let primary = self.config.settings(&stem);
            let Some(canary) = primary.canary.clone() else {
                if let Some(serving) = self.serving.get_mut(&stem)
                    && serving.canary.take().is_some()
                {
                    serving.running.controller().set_canary(None);
                }
                continue;
            };
            let file = self.dir.join(&canary.file);
            // The primary's limits, the canary's own pin.
            let settings = primary.for_canary();
            let Some(seen) = look(&file, settings.clone()) else {
                continue;
            };
            let current = self.serving.get(&stem).and_then(|s| s.canary.clone());
            if current == Some((canary.file.clone(), seen.clone()))
                || self.refused.get(&canary.file) == Some(&seen)
            {
                continue;
            }
            let result = self
                .load_canary(&stem, &file, &settings, &canary.selector)
                .await;
            match result {
                Ok(loaded) => {
                    self.refused.remove(&canary.file);
                    if let Some(serving) = self.serving.get_mut(&stem) {
                        tracing::info!(
                            plugin = loaded.plugin.name(),
                            selector = canary.selector,
                            "canary serving"
                        );
                        serving.running.controller().set_canary(Some(loaded));
                        serving.canary = Some((canary.file.clone(), seen));
                    }
                }
                Err(error) => {
                    let reason = error.to_string();
                    self.report_refusal(&file, &reason).await;
                    self.refused.insert(canary.file.clone(), seen);
                    refusals.push((file, reason));
                }
            }
        }
    }

    async fn load_canary(
        &self,
        stem: &str,
        file: &Path,
        settings: &PluginSettings,
        selector: &str,
    ) -> Result<Canary, LoadError> {
        let canary = PluginFile {
            stem: loader::stem(file),
            path: file.to_owned(),
            settings: settings.clone(),
        };
        let plugin = loader::load(&self.context.runtime, &canary).await?;
        if let Some(description) = plugin.description() {
            self.context
                .kinds
                .check(description, plugin.access())
                .await
                .map_err(|e| LoadError::Kinds {
                    path: file.to_owned(),
                    message: e.to_string(),
                })?;
        }
        let main = self
            .serving
            .get(stem)
            .map(|s| s.running.controller().clone());
        let fits = match (&main, plugin.description()) {
            (Some(main), Some(d)) => same_shape(main.description(), d),
            _ => false,
        };
        if !fits {
            return Err(LoadError::Describe {
                path: file.to_owned(),
                message: format!("a canary must describe the same controller as {stem}.wasm"),
            });
        }
        let selector = LabelSelector::parse(selector).map_err(|e| LoadError::Describe {
            path: file.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Canary {
            plugin: Arc::new(plugin),
            selector,
        })
    }
}
