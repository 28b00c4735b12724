//! What the web tier may touch: http(s) URLs only, no private or local addresses unless the
//! configuration allows them, no blocklisted domains.
//!
//! An exposed daemon fetches URLs its callers choose; without these checks it would be a proxy
//! into the user's network (router admin pages, cloud metadata at 169.254.169.254, ...).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use url::Url;

use crate::protocol::{DocdexError, ErrorCode, Result};

/// Parses a URL the web tier may fetch: `http` or `https` with a host; the fragment dropped
/// (it never reaches the server, and it would split one page into several cache entries).
pub fn parse_web_url(raw: &str) -> Result<Url> {
    let mut url = Url::parse(raw.trim()).map_err(|err| {
        DocdexError::new(ErrorCode::UrlRefused, format!("`{raw}` is not a URL: {err}"))
            .with_hint("give an absolute http:// or https:// URL")
    })?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(DocdexError::new(
                ErrorCode::UrlRefused,
                format!("the `{other}:` scheme is refused; only http and https pages are fetched"),
            )
            .with_hint("give an absolute http:// or https:// URL"))
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(DocdexError::new(ErrorCode::UrlRefused, format!("`{raw}` has no host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(DocdexError::new(ErrorCode::UrlRefused, "URLs with credentials are refused"));
    }
    url.set_fragment(None);
    Ok(url)
}

/// The cache key of a URL: parsed (scheme and host lowercased, default port dropped), without
/// fragment.
pub fn normalise(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.to_string()
}

/// The domain a URL's per-domain delay and blocklist apply to: its host, lowercased, without
/// a leading `www.`.
pub fn domain_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or("").trim_end_matches('.').to_ascii_lowercase();
    host.strip_prefix("www.").map(str::to_string).unwrap_or(host)
}

/// Suffix match on whole labels: `example.com` blocks `example.com` and `docs.example.com`,
/// not `badexample.com`.
pub fn is_blocked(domain: &str, blocklist: &[String]) -> bool {
    blocklist.iter().any(|entry| {
        let entry = entry.trim().trim_start_matches("*.").trim_start_matches('.').to_ascii_lowercase();
        !entry.is_empty() && (domain == entry || domain.ends_with(&format!(".{entry}")))
    })
}

/// Refuses a blocklisted domain with the entry that matched.
pub fn check_blocklist(url: &Url, blocklist: &[String]) -> Result<()> {
    let domain = domain_of(url);
    if is_blocked(&domain, blocklist) {
        return Err(DocdexError::new(ErrorCode::UrlRefused, format!("{domain} is on the web blocklist"))
            .with_hint("remove it from `[web] blocklist` / DOCDEX_WEB_BLOCKLIST to allow it"));
    }
    Ok(())
}

/// Loopback, private, link-local, unspecified, shared (CGNAT), multicast and documentation
/// ranges: anything that is not a public unicast address.
pub fn is_private_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private_v4(v4);
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
                || v6 == Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0)
        }
    }
}

fn is_private_v4(v4: Ipv4Addr) -> bool {
    let [a, b, _, _] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240
}

fn private_refused(host: &str, ip: IpAddr) -> DocdexError {
    DocdexError::new(ErrorCode::UrlRefused, format!("{host} is a private or local address ({ip}); refused")).with_hint(
        "set `[web] allow_private_addresses = true` to fetch from your own network (never on an exposed daemon)",
    )
}

/// Resolves the URL's host and refuses it when any address is private (unless allowed).
/// Resolution failures are `web_unavailable`.
pub async fn check_address(url: &Url, allow_private: bool) -> Result<()> {
    if allow_private {
        return Ok(());
    }
    let host = url.host_str().unwrap_or("");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return if is_private_ip(ip) { Err(private_refused(host, ip)) } else { Ok(()) };
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|err| DocdexError::new(ErrorCode::WebUnavailable, format!("cannot resolve {host}: {err}")))?
        .collect();
    match addrs.iter().find(|a| is_private_ip(a.ip())) {
        Some(addr) => Err(private_refused(host, addr.ip())),
        None => Ok(()),
    }
}

/// What every request a browser tab makes may reach: the page, its subresources, the
/// redirects and script navigations inside the browser. Checked on each request Chromium is
/// about to send (`web::open_tab`), with the rules the page itself passed.
#[derive(Debug, Clone)]
pub struct RequestPolicy {
    allow_private: bool,
    blocklist: Vec<String>,
    /// Each host is resolved once per tab: a page's requests go to a few hosts many times,
    /// and the lookup blocks the tab's event thread.
    private_by_host: Arc<Mutex<PrivateByHost>>,
}

/// (host, port) → the private address it resolves to, if any.
type PrivateByHost = HashMap<(String, u16), Option<IpAddr>>;

impl RequestPolicy {
    pub fn new(allow_private: bool, blocklist: Vec<String>) -> RequestPolicy {
        RequestPolicy { allow_private, blocklist, private_by_host: Arc::default() }
    }

    /// Why a request the browser is about to send is refused, if it is. `data:`, `blob:` and
    /// `about:` stay inside the page; any other scheme but http(s) is refused, as are
    /// blocked domains and (unless allowed) hosts that are or resolve to private addresses.
    /// Resolution is blocking: it runs on the tab's event thread, per request.
    pub fn refusal(&self, raw: &str) -> Option<String> {
        let Ok(url) = Url::parse(raw) else { return Some(format!("{raw} is not a URL")) };
        match url.scheme() {
            "data" | "blob" | "about" => return None,
            "http" | "https" => {}
            other => return Some(format!("the {other} scheme is refused")),
        }
        if let Err(err) = check_blocklist(&url, &self.blocklist) {
            return Some(err.message);
        }
        if self.allow_private {
            return None;
        }
        let host = url.host_str().unwrap_or("");
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let private = match bare.parse::<IpAddr>() {
            Ok(ip) => is_private_ip(ip).then_some(ip),
            Err(_) => {
                let port = url.port_or_known_default().unwrap_or(80);
                let key = (bare.to_string(), port);
                let mut resolved = self.private_by_host.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                *resolved.entry(key).or_insert_with(|| {
                    match std::net::ToSocketAddrs::to_socket_addrs(&(bare, port)) {
                        Ok(addrs) => addrs.map(|a| a.ip()).find(|ip| is_private_ip(*ip)),
                        // Chromium's own lookup fails the same way.
                        Err(_) => None,
                    }
                })
            }
        };
        private.map(|ip| private_refused(host, ip).message)
    }
}

/// A DNS resolver for reqwest that drops private addresses, so a public name that resolves
/// (or re-resolves, DNS rebinding) to a private address cannot be reached.
pub struct PublicOnlyResolver;

impl reqwest::dns::Resolve for PublicOnlyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = addrs.into_iter().filter(|a| !is_private_ip(a.ip())).collect();
            if public.is_empty() {
                return Err(format!("{host} resolves only to private or local addresses").into());
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// An HTTP client for the web tier: bounded redirects that stay on http(s) (and off private
/// IP literals unless allowed), the configured user agent, private names unresolvable.
pub fn http_client(user_agent: &str, allow_private: bool, timeout: std::time::Duration) -> Result<reqwest::Client> {
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= 10 {
            return attempt.error("too many redirects");
        }
        let url = attempt.url().clone();
        if !matches!(url.scheme(), "http" | "https") {
            return attempt.error(format!("redirect to a `{}:` URL refused", url.scheme()));
        }
        if !allow_private {
            let host = url.host_str().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
            if host.parse::<IpAddr>().is_ok_and(is_private_ip) {
                return attempt.error(format!("redirect to the private address {host} refused"));
            }
        }
        attempt.follow()
    });
    let mut builder = reqwest::Client::builder().user_agent(user_agent).redirect(policy).timeout(timeout).no_proxy();
    if !allow_private {
        builder = builder.dns_resolver(Arc::new(PublicOnlyResolver));
    }
    builder.build().map_err(|err| DocdexError::internal(format!("cannot build the HTTP client: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_and_https_urls_pass() {
        for bad in
            ["file:///etc/passwd", "data:text/html,hi", "chrome://settings", "javascript:alert(1)", "ftp://x.org/"]
        {
            let err = parse_web_url(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::UrlRefused, "{bad}");
        }
        let url = parse_web_url("HTTPS://Docs.RS:443/tokio#section").unwrap();
        assert_eq!(normalise(&url), "https://docs.rs/tokio");
        assert!(parse_web_url("https://user:pw@example.com/").is_err());
    }

    #[test]
    fn private_ranges_are_recognised() {
        for ip in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1"] {
            assert!(is_private_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1"] {
            assert!(is_private_ip(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(!is_private_ip(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn blocklist_matches_whole_label_suffixes() {
        let list = vec!["example.com".to_string(), "*.spam.org".to_string()];
        assert!(is_blocked("example.com", &list));
        assert!(is_blocked("docs.example.com", &list));
        assert!(!is_blocked("badexample.com", &list));
        assert!(is_blocked("a.spam.org", &list));
        assert_eq!(domain_of(&parse_web_url("https://WWW.Example.com/x").unwrap()), "example.com");
    }
}

#[cfg(test)]
mod request_policy_tests {
    use super::*;

    #[test]
    fn a_browser_request_is_judged_like_the_page() {
        let policy = RequestPolicy::new(false, vec!["tracker.example".into()]);
        assert!(policy.refusal("http://127.0.0.1:8080/x").is_some_and(|why| why.contains("private")));
        assert!(policy.refusal("http://[::1]/x").is_some());
        assert!(policy.refusal("http://10.0.0.7/admin").is_some());
        assert!(policy.refusal("http://169.254.169.254/latest/meta-data").is_some());
        assert!(policy.refusal("https://cdn.tracker.example/a.js").is_some_and(|why| why.contains("tracker.example")));
        assert!(policy.refusal("file:///etc/passwd").is_some_and(|why| why.contains("file")));
        assert!(policy.refusal("data:text/plain,hi").is_none());
        assert!(policy.refusal("http://93.184.216.34/").is_none());
        let loopback_allowed = RequestPolicy::new(true, vec!["localhost".into()]);
        assert!(loopback_allowed.refusal("http://127.0.0.1:9/x").is_none());
        assert!(loopback_allowed.refusal("http://localhost:9/x").is_some());
    }
}
