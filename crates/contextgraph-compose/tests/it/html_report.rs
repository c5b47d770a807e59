//! The HTML report (`cgp context --html`): hostile provider text stays text,
//! checked in a real browser (headless Chromium: DOM and screenshot).
//!
//! Needs `/usr/bin/chromium` (Debian: `apt-get install -y chromium`). Without
//! it the browser tests fail when `CI` is set and are skipped, loudly on
//! stderr, otherwise.

use contextgraph_compose::html::{render, render_with, HtmlOptions};
use contextgraph_compose::{
    compose, sha256_digest, Budget, Composition, Options, ProviderOutcome, ProviderStatus,
};
use contextgraph_types::{ContextFrame, FrameKind, Provenance};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const SCRIPT: &str = "<script>document.title='pwned'</script>";
const STYLE_BREAK: &str = "</style><script>alert(1)</script>";
const ATTR_BREAK: &str = "\"><img src=x onerror=alert(1) id=injected>";
const SINGLE_QUOTE_BREAK: &str = "' onmouseover='alert(1)";
const BIDI: &str = "invoice\u{202E}gpj.exe";
const CONTROL: &str = "bell\u{7}esc\u{1b}[31mred";

fn hostile_frame(id: &str, content: &str) -> ContextFrame {
    let mut f = ContextFrame::new(
        id,
        FrameKind::Doc,
        format!("{SCRIPT} title of {id}"),
        content,
    );
    f.citation_label = Some(format!("{STYLE_BREAK} {id}"));
    f.content_digest = Some(sha256_digest(content.as_bytes()));
    f.score = 0.75;
    f
}

fn with_uri(mut f: ContextFrame, uri: &str) -> ContextFrame {
    f.provenance = vec![Provenance {
        kind: Provenance::FILE.to_owned(),
        uri: Some(uri.to_owned()),
        range: Some("L1-2".to_owned()),
        digest: None,
        method: Some(ATTR_BREAK.to_owned()),
        by: Some(SINGLE_QUOTE_BREAK.to_owned()),
    }];
    f
}

fn hostile_outcomes() -> Vec<ProviderOutcome> {
    let huge = "A".repeat(200_000);
    vec![
        ProviderOutcome::accepted(
            format!("evil{ATTR_BREAK}"),
            vec![
                with_uri(
                    hostile_frame("js-link", &format!("{SCRIPT}\n{BIDI}\n{CONTROL}")),
                    "javascript:alert(document.domain)",
                ),
                with_uri(
                    hostile_frame(ATTR_BREAK, &format!("{STYLE_BREAK} body")),
                    " JaVaScRiPt:alert(2)",
                ),
                with_uri(
                    hostile_frame("good-link", "honest content"),
                    "https://example.org/docs?a=1&b=\"2\"",
                ),
                with_uri(
                    hostile_frame("file-link", "file content"),
                    "file:///repo/src/lib.rs",
                ),
                hostile_frame("huge", &huge),
            ],
        ),
        ProviderOutcome::without_frames(
            "broken",
            ProviderStatus::Crashed {
                detail: format!("{SCRIPT} {BIDI}"),
            },
        ),
    ]
}

fn hostile_composition(outcomes: &[ProviderOutcome]) -> Composition {
    compose(outcomes, &Options::new(Budget::budget_tokens(4000))).expect("composes")
}

#[test]
fn html_report_escapes_every_hostile_string_in_the_source() {
    let outcomes = hostile_outcomes();
    let c = hostile_composition(&outcomes);
    let html = render_with(
        &c,
        &HtmlOptions {
            goal: Some(SCRIPT),
            outcomes: &outcomes,
            ..HtmlOptions::default()
        },
    );
    // The only raw tags are the renderer's: no script, no img, no handler.
    assert!(!html.to_lowercase().contains("<script"), "no script tag");
    assert!(!html.contains("<img"), "no injected element");
    // Handler text survives only as text: its quotes cannot close an attribute.
    assert!(!html.contains("onmouseover='") && !html.contains("\"><img"));
    assert_eq!(
        html.matches("</style>").count(),
        1,
        "only the page's own style closes"
    );
    assert!(html.contains("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"));
    assert!(
        html.contains("invoice⟦U+202E⟧gpj.exe"),
        "bidi override made visible"
    );
    assert!(html.contains("bell⟦U+0007⟧esc⟦U+001B⟧[31mred"));
    assert!(!html.contains('\u{202E}') && !html.contains('\u{1b}'));
    // Links: only the https and file ones, never javascript.
    let hrefs: Vec<&str> = html.split("href=\"").skip(1).collect();
    assert!(!hrefs.is_empty(), "safe provenance is linked");
    for h in &hrefs {
        assert!(
            h.starts_with("https://") || h.starts_with("file:"),
            "{h:.40}"
        );
    }
    assert!(!html.to_lowercase().contains("href=\"javascript"));
    assert!(
        html.contains("javascript:alert(document.domain)"),
        "shown as text"
    );
    // The huge title is cut, the prompt is not made bigger than it must be.
    assert!(
        html.len() < 120_000 + c.prompt.len() * 2,
        "bounded page: {}",
        html.len()
    );
}

#[test]
fn html_report_without_outcomes_lists_every_frame_and_the_budget() {
    let outcomes = hostile_outcomes();
    let c = hostile_composition(&outcomes);
    let html = render(&c);
    assert!(html.starts_with("<!DOCTYPE html>"));
    let rows = html.matches("<tr class=\"inc\"><td class=\"n\">").count()
        + html.matches("<tr class=\"exc\"><td class=\"n\">").count();
    assert_eq!(rows, c.audit.frames.len(), "one row per offered frame");
    assert!(
        html.contains("over budget"),
        "the excluded frame's reason is shown"
    );
    assert!(html.contains(&format!(
        "<b>{}</b><span>budget tokens",
        c.audit.budget.requested
    )));
    assert!(html.contains("id=\"budget-bar\""));
}

/// The browser, or `None` (after saying why) when it is missing outside CI.
fn chromium() -> Option<&'static str> {
    if Path::new(CHROMIUM).exists() {
        return Some(CHROMIUM);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{CHROMIUM} is missing and CI is set: install it with `apt-get install -y chromium`"
        );
    }
    eprintln!(
        "SKIPPED: {CHROMIUM} not found, the headless-browser checks of the HTML report did not run \
         (install it with `apt-get install -y chromium`; with CI set this is a failure)"
    );
    None
}

/// Run headless Chromium on `page` with `extra` flags, its own profile
/// directory, no network services; fail after two minutes.
fn run_chromium(browser: &str, page: &Path, profile: &Path, extra: &[String]) -> String {
    let out = profile.join("stdout.txt");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.join("profile").display()
        ))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "chromium exited with {status}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(out).expect("chromium output")
}

fn write_report(dir: &Path) -> PathBuf {
    let outcomes = hostile_outcomes();
    let c = hostile_composition(&outcomes);
    let html = render_with(
        &c,
        &HtmlOptions {
            goal: Some(&format!("explain retries {SCRIPT}")),
            outcomes: &outcomes,
            ..HtmlOptions::default()
        },
    );
    let page = dir.join("report.html");
    std::fs::write(&page, html).expect("report written");
    page
}

#[test]
fn html_report_in_headless_chromium_keeps_hostile_strings_as_text() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let page = write_report(dir.path());
    let dom = run_chromium(browser, &page, dir.path(), &["--dump-dom".to_owned()]);
    assert!(
        dom.contains("id=\"frames\""),
        "the page rendered: {:.200}",
        dom
    );
    // Serialised DOM: text nodes come back escaped, elements as tags.
    let lower = dom.to_lowercase();
    assert!(!lower.contains("<script"), "no script element in the DOM");
    assert!(!lower.contains("<img"), "no injected img element");
    assert!(!dom.contains("id=\"injected\""));
    assert!(!lower.contains("onerror=\"") && !lower.contains("onmouseover=\""));
    assert!(!dom.contains("<title>pwned</title>"));
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
    assert!(dom.contains("&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(dom.contains("\"&gt;&lt;img src=x onerror=alert(1) id=injected&gt;"));
    assert!(dom.contains("invoice⟦U+202E⟧gpj.exe"));
    for h in dom.split("href=\"").skip(1) {
        assert!(
            h.starts_with("https://") || h.starts_with("file:"),
            "{h:.60}"
        );
    }
    assert_eq!(dom.matches("<a ").count(), 2, "two safe links, no others");
}

#[test]
fn html_report_in_headless_chromium_screenshots_as_a_non_blank_page() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let page = write_report(dir.path());
    let shot = dir.path().join("shot.png");
    run_chromium(
        browser,
        &page,
        dir.path(),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".to_owned(),
            "--hide-scrollbars".to_owned(),
        ],
    );
    if let Some(keep) = std::env::var_os("CGP_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).expect("screenshot kept");
    }
    let bytes = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
    let mut reader = decoder.read_info().expect("PNG header");
    let (width, height) = (reader.info().width, reader.info().height);
    assert_eq!((width, height), (1280, 2000), "the requested window size");
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).expect("PNG data");
    let pixels = &pixels[..frame.buffer_size()];
    let step = frame.color_type.samples();
    let first = &pixels[..step];
    let differing = pixels.chunks(step).filter(|p| *p != first).count();
    assert!(
        differing > pixels.len() / step / 50,
        "the page is not blank: {differing} pixels differ from the first"
    );
}

/// Realistic frames as the workspace provider names them (long path ids,
/// one id with no break opportunity at all), with descending scores.
fn workspace_like_outcomes() -> Vec<ProviderOutcome> {
    let mut frames = Vec::new();
    for n in 0..18u32 {
        let id = if n == 7 {
            "x".repeat(140)
        } else {
            format!(
                "crates/contextgraph-provider-workspace/src/module_{n}/deeply_nested_file_{n}.rs#fn:compose_the_thing_{n}:L{}-{}",
                n * 10 + 1,
                n * 10 + 40
            )
        };
        let content = format!(
            "fn compose_the_thing_{n}() {{ /* {} */ }}\n",
            "body ".repeat(40)
        );
        let mut f = ContextFrame::new(
            &id,
            FrameKind::Symbol,
            format!("compose_the_thing_{n} in deeply_nested_file_{n}.rs"),
            &content,
        );
        f.content_digest = Some(sha256_digest(content.as_bytes()));
        f.score = 1.0 - n as f32 * 0.05;
        frames.push(f);
    }
    vec![ProviderOutcome::accepted(
        "contextgraph-provider-workspace-with-a-long-name",
        frames,
    )]
}

/// The report's layout measured in the browser at `width` px: the page is
/// copied without its no-script policy and with a script that writes the
/// measurements into the DOM, which `--dump-dom` then shows.
fn measure_layout(browser: &str, dir: &Path, width: u32) -> serde_json::Value {
    let outcomes = workspace_like_outcomes();
    let c = compose(&outcomes, &Options::new(Budget::budget_tokens(900))).expect("composes");
    assert!(
        c.audit.frames.iter().any(|f| !f.is_included()),
        "some frames are excluded, so both kinds of rows are measured"
    );
    let html = render_with(
        &c,
        &HtmlOptions {
            goal: Some("how is the thing composed?"),
            outcomes: &outcomes,
            ..HtmlOptions::default()
        },
    );
    let csp_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("the page has its policy");
    let csp_end = csp_start + html[csp_start..].find('>').expect("meta ends") + 1;
    let script = "<script>\
        const d=document.documentElement;\
        const w=s=>[...document.querySelectorAll(s)].map(e=>e.getBoundingClientRect());\
        const ids=w('#frames code').map(r=>r.width);\
        const rows=w('#frames tr').map(r=>r.height);\
        const right=Math.max(...w('table').map(r=>r.right));\
        const p=document.createElement('pre');p.id='measure';\
        p.textContent='MEASURE'+JSON.stringify({scroll:d.scrollWidth,client:d.clientWidth,\
        inner:innerWidth,minId:Math.min(...ids),maxRow:Math.max(...rows),right:right})+'END';\
        document.body.appendChild(p);</script>";
    let measured = format!(
        "{}{}",
        &html[..csp_start],
        &html[csp_end..].replace("</body>", &format!("{script}</body>"))
    );
    let page = dir.join(format!("report-{width}.html"));
    std::fs::write(&page, measured).expect("page written");
    let profile = dir.join(format!("p{width}"));
    std::fs::create_dir_all(&profile).expect("profile dir");
    let dom = run_chromium(
        browser,
        &page,
        &profile,
        &[
            "--dump-dom".to_owned(),
            format!("--window-size={width},1000"),
            "--hide-scrollbars".to_owned(),
            "--virtual-time-budget=3000".to_owned(),
        ],
    );
    // The script's own text holds `MEASURE'`; its output `MEASURE{`.
    let start = dom.find("MEASURE{").expect("the measuring script ran") + "MEASURE".len();
    let end = start + dom[start..].find("}END").expect("measurement ends") + 1;
    serde_json::from_str(&dom[start..end].replace("&amp;", "&")).expect("measurements")
}

#[test]
fn html_report_fits_700_and_1400_pixel_windows_without_wrapping_ids_per_character() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    for width in [700u32, 1400] {
        let m = measure_layout(browser, dir.path(), width);
        let num = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k} in {m}"));
        assert_eq!(
            num("inner"),
            f64::from(width),
            "the window is {width} px: {m}"
        );
        assert!(
            num("scroll") <= num("client"),
            "no horizontal overflow at {width} px: {m}"
        );
        assert!(
            num("right") <= f64::from(width),
            "tables end inside the page at {width} px: {m}"
        );
        // One character of the 12 px monospace id font is about 7 px: an id
        // cell of 150 px shows 20 characters a line, not one.
        assert!(
            num("minId") >= 150.0,
            "ids are not wrapped a character a line at {width} px: {m}"
        );
        // The longest row (a 140-character id without a break) stays a few lines.
        assert!(
            num("maxRow") <= 240.0,
            "rows stay readable at {width} px: {m}"
        );
    }
}

#[test]
fn html_report_lists_frames_best_first_with_rank_score_and_explains_its_terms() {
    let outcomes = workspace_like_outcomes();
    let c = compose(&outcomes, &Options::new(Budget::budget_tokens(900))).expect("composes");
    let html = render_with(
        &c,
        &HtmlOptions {
            outcomes: &outcomes,
            ..HtmlOptions::default()
        },
    );
    let frames = &html[html.find("id=\"frames\"").unwrap()..];
    // Rows in rank order 1, 2, 3, … with scores descending.
    let ranks: Vec<u32> = frames
        .split("<td class=\"n\">")
        .skip(1)
        .step_by(3)
        .map(|cell| cell[..cell.find('<').unwrap()].parse().unwrap())
        .take(18)
        .collect();
    assert_eq!(ranks, (1..=18).collect::<Vec<_>>(), "{frames:.2000}");
    let first = frames.find("compose_the_thing_0 in").unwrap();
    let second = frames.find("compose_the_thing_1 in").unwrap();
    assert!(first < second, "the best frame comes first");
    assert!(frames.contains("<td class=\"n\">1</td><td class=\"n\">1.000</td>"));
    for term in [
        "<dt>demand</dt>",
        "<dt>share</dt>",
        "<dt>charge</dt>",
        "<dt>UR1</dt>",
        "<dt>rank</dt>",
    ] {
        assert!(html.contains(term), "{term} is explained on the page");
    }
}
