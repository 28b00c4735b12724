//! DuckDuckGo's HTML endpoint: the result page markup (`result__a` links through `/l/?uddg=`
//! redirects, `result__snippet`, ads marked `result--ad`) and its challenge ("anomaly") page.

use std::collections::HashSet;

use scraper::{Html, Selector};
use url::Url;

use crate::protocol::WebResult;

/// What a discovery response turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum DdgPage {
    Results(Vec<WebResult>),
    /// The bot challenge: DuckDuckGo wants a human. Retrying later or through the proxy helps.
    Anomaly,
}

/// Markers of the challenge page (its modal, its script, its message).
const ANOMALY_MARKERS: [&str; 4] = ["anomaly-modal", "anomaly.js", "bots use DuckDuckGo too", "challenge-form"];

pub fn is_anomaly(html: &str) -> bool {
    ANOMALY_MARKERS.iter().any(|marker| html.contains(marker))
}

/// Parses a result page. Ads and duplicate targets are dropped; `base` resolves relative
/// and protocol-relative links.
pub fn parse(html: &str, base: &Url) -> DdgPage {
    if is_anomaly(html) {
        return DdgPage::Anomaly;
    }
    let document = Html::parse_document(html);
    let result_sel = Selector::parse("div.result, div.web-result").expect("static selector");
    let link_sel = Selector::parse("a.result__a").expect("static selector");
    let snippet_sel = Selector::parse(".result__snippet").expect("static selector");
    let mut seen = HashSet::new();
    let mut results = Vec::new();
    for result in document.select(&result_sel) {
        let classes: Vec<&str> = result.value().classes().collect();
        if classes.iter().any(|c| c.contains("result--ad") || *c == "result--ad") {
            continue;
        }
        let Some(link) = result.select(&link_sel).next() else { continue };
        let Some(href) = link.value().attr("href") else { continue };
        let Some(target) = target_url(href, base) else { continue };
        if is_ad_link(&target) || !seen.insert(dedup_key(&target)) {
            continue;
        }
        let title = collapse(&link.text().collect::<String>());
        let snippet = result.select(&snippet_sel).next().map(|s| collapse(&s.text().collect::<String>()));
        results.push(WebResult { title, url: target.to_string(), snippet: snippet.unwrap_or_default() });
    }
    DdgPage::Results(results)
}

/// The real target of a result link: the `uddg` parameter of a `/l/?uddg=` redirect, or the
/// link itself when it is direct. Only http(s) targets are kept.
pub fn target_url(href: &str, base: &Url) -> Option<Url> {
    let link = base.join(href).ok()?;
    let target = if link.path().starts_with("/l/") {
        let encoded = link.query_pairs().find(|(k, _)| k == "uddg").map(|(_, v)| v.into_owned())?;
        Url::parse(&encoded).ok()?
    } else {
        link
    };
    matches!(target.scheme(), "http" | "https").then_some(target)
}

/// DuckDuckGo's ad clicks go through `/y.js`; some ad blocks are not marked by class.
fn is_ad_link(url: &Url) -> bool {
    let host = url.host_str().unwrap_or("");
    (host.ends_with("duckduckgo.com") && url.path().starts_with("/y.js"))
        || url.query().is_some_and(|q| q.contains("ad_domain="))
}

/// Two results for one page (with and without `www.`, a trailing slash or a fragment) are one.
fn dedup_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or("").trim_start_matches("www.").to_ascii_lowercase();
    let path = url.path().trim_end_matches('/');
    match url.query() {
        Some(q) => format!("{host}{path}?{q}"),
        None => format!("{host}{path}"),
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r##"<html><body><div id="links" class="results">
<div class="result results_links results_links_deep result--ad">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=ads.example&amp;u3=x">Buy now</a></h2>
  <a class="result__snippet" href="#">An ad</a></div></div>
<div class="result results_links results_links_deep web-result">
  <div class="links_main links_deep result__body"><h2 class="result__title">
  <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.rs%2Ftokio%2Flatest%2Ftokio%2Ftask%2Fstruct.JoinSet.html&amp;rut=abc">JoinSet in <b>tokio</b>::task</a></h2>
  <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">A collection of tasks spawned on a <b>Tokio</b> runtime.</a></div></div>
<div class="result results_links results_links_deep web-result">
  <h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.docs.rs%2Ftokio%2Flatest%2Ftokio%2Ftask%2Fstruct.JoinSet.html%2F&amp;rut=def">Duplicate</a></h2></div>
<div class="result results_links web-result">
  <h2 class="result__title"><a class="result__a" href="https://example.org/direct">Direct link</a></h2>
  <div class="result__snippet">Plain snippet</div></div>
</div></body></html>"##;

    #[test]
    fn results_are_decoded_and_ads_and_duplicates_dropped() {
        let base = Url::parse("https://html.duckduckgo.com/html/").unwrap();
        let DdgPage::Results(results) = parse(PAGE, &base) else { panic!("not results") };
        assert_eq!(results.len(), 2, "{results:?}");
        assert_eq!(results[0].url, "https://docs.rs/tokio/latest/tokio/task/struct.JoinSet.html");
        assert_eq!(results[0].title, "JoinSet in tokio::task");
        assert_eq!(results[0].snippet, "A collection of tasks spawned on a Tokio runtime.");
        assert_eq!(results[1].url, "https://example.org/direct");
        assert_eq!(results[1].snippet, "Plain snippet");
    }

    #[test]
    fn the_challenge_page_is_recognised() {
        let html = r#"<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
            <form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html"></form></body></html>"#;
        let base = Url::parse("https://html.duckduckgo.com/html/").unwrap();
        assert_eq!(parse(html, &base), DdgPage::Anomaly);
    }
}
