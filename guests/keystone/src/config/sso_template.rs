//! `sso_callback_template.html`: keystone's canonical WebSSO callback page, shipped when
//! federation is projected (pip installs of keystone do not carry it; facts §2.7).
//!
//! Keystone fills it with Python's `string.Template` at response time: `$host` is the
//! trusted dashboard the token goes back to, `$token` the token. The page posts the
//! token there as soon as it loads, with a button for browsers without JavaScript.

/// The template (keystone 29.0.0's HTML5 revision of `etc/sso_callback_template.html`).
pub const SSO_CALLBACK_TEMPLATE_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Keystone WebSSO redirect</title>
  </head>
  <body>
     <form id="sso" name="sso" action="$host" method="post">
       Please wait...
       <br>
       <input type="hidden" name="token" id="token" value="$token">
       <noscript>
         <input type="submit" name="submit_no_javascript" id="submit_no_javascript"
            value="If your JavaScript is disabled, please click to continue">
       </noscript>
     </form>
     <script>
       window.onload = function() {
         document.forms['sso'].submit();
       }
     </script>
  </body>
</html>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sso_template_names_only_host_and_token_as_placeholders() {
        let placeholders: Vec<&str> = SSO_CALLBACK_TEMPLATE_HTML
            .match_indices('$')
            .map(|(at, _)| {
                let rest = &SSO_CALLBACK_TEMPLATE_HTML[at + 1..];
                let end = rest
                    .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                    .unwrap_or(rest.len());
                &rest[..end]
            })
            .collect();
        assert_eq!(placeholders, ["host", "token"]);
    }

    #[test]
    fn the_sso_template_posts_the_token_to_the_host_when_it_loads() {
        for fragment in [
            r#"<form id="sso" name="sso" action="$host" method="post">"#,
            r#"<input type="hidden" name="token" id="token" value="$token">"#,
            "document.forms['sso'].submit();",
        ] {
            assert!(SSO_CALLBACK_TEMPLATE_HTML.contains(fragment), "{fragment}");
        }
    }
}
