//! `cgp config` end to end: discovery, merge with origins, TOML and JSON,
//! tokens never printed, errors naming file, line, column and key.

use contextgraph_testkit::sandbox::Sandbox;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn with_no_file_the_builtin_workspace_provider_is_the_configuration() {
    let s = Sandbox::new(crate::CGP);
    let out = s.run(&["config"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("No cgp.toml was found"), "{text}");
    assert!(
        text.contains("[providers.workspace]  # built-in default"),
        "{text}"
    );
    assert!(text.contains("budget = 8000"), "{text}");
    let out = s.run(&["config", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The built-ins in name order: history (started in a git working tree
    // only), then workspace.
    assert_eq!(v["providers"][0]["name"], "history");
    assert_eq!(v["providers"][0]["type"], "history");
    assert_eq!(v["providers"][1]["name"], "workspace");
    assert_eq!(v["providers"][1]["type"], "workspace");
    assert_eq!(v["providers"][1]["origin"]["from"], "default");
}

#[test]
fn the_workspace_file_wins_over_the_user_file_and_each_value_says_where_it_came_from() {
    let s = Sandbox::new(crate::CGP);
    let user = s.write(
        "home/.config/cgp/cgp.toml",
        "budget = 1000\nsafety_factor = 2.0\n[providers.notes]\ncommand = \"user-notes\"\n",
    );
    let ws = s.write(
        "ws/cgp.toml",
        "budget = 4000\n[providers.notes]\ncommand = \"ws-notes\"\n",
    );
    std::fs::create_dir_all(s.path("ws/sub")).unwrap();
    let out = s.run(&["config", "--json", "--dir", "sub"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["budget"]["value"], 4000);
    assert_eq!(v["budget"]["origin"]["path"], ws.display().to_string());
    assert_eq!(v["safety_factor"]["value"], 2.0);
    assert_eq!(
        v["safety_factor"]["origin"]["path"],
        user.display().to_string()
    );
    let notes = v["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "notes")
        .unwrap();
    assert_eq!(notes["command"], "ws-notes");
    let out = s.run(&["config", "--dir", "sub"]);
    let text = stdout(&out);
    assert!(
        text.contains(&format!("budget = 4000  # {}:1", ws.display())),
        "{text}"
    );
}

#[test]
fn cgp_config_env_names_the_user_file() {
    let s = Sandbox::new(crate::CGP);
    let file = s.write("elsewhere.toml", "timeout_ms = 1234\n");
    let out = s
        .command(&["config", "--json"])
        .env("CGP_CONFIG", &file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["timeout_ms"]["value"], 1234);
    let out = s
        .command(&["config"])
        .env("CGP_CONFIG", s.path("missing.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("CGP_CONFIG"), "{}", stderr(&out));
}

#[test]
fn c8_a_token_is_shown_only_as_its_variable_never_its_value() {
    let s = Sandbox::new(crate::CGP);
    s.write(
        "ws/cgp.toml",
        "[providers.search]\nurl = \"https://search.example/cgp\"\ntoken_env = \"SEARCH_TOKEN\"\n",
    );
    for args in [&["config"][..], &["config", "--json"][..]] {
        let out = s
            .command(args)
            .env("SEARCH_TOKEN", "sk-live-very-secret")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("SEARCH_TOKEN"), "{text}");
        assert!(!text.contains("sk-live-very-secret"), "{text}");
    }
}

#[test]
fn c8_a_literal_token_in_the_file_is_an_error_pointing_to_token_env() {
    let s = Sandbox::new(crate::CGP);
    let file = s.write(
        "ws/cgp.toml",
        "[providers.search]\nurl = \"https://search.example/cgp\"\ntoken = \"sk-live-very-secret\"\n",
    );
    let out = s.run(&["config"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{}:3:9: key `providers.search.token`",
            file.display()
        )),
        "{err}"
    );
    assert!(err.contains("token_env"), "{err}");
    assert!(!err.contains("sk-live-very-secret"), "{err}");
}

#[test]
fn an_unknown_key_exits_1_naming_file_line_column_and_key() {
    let s = Sandbox::new(crate::CGP);
    let file = s.write(
        "ws/cgp.toml",
        "budget = 100\n[providers.notes]\ncommand = \"x\"\ntimout_ms = 5\n",
    );
    let out = s.run(&["config"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!("error: {}:4:1: key `timout_ms`", file.display())),
        "{err}"
    );
    // --config reads exactly the file given, and a missing one is an error.
    let out = s.run(&["config", "--config", "nope.toml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--config"), "{}", stderr(&out));
}

#[test]
fn help_has_examples_and_no_colour_under_no_color() {
    let s = Sandbox::new(crate::CGP);
    let out = s.run(&["config", "--help"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("Examples:") && text.contains("cgp config --json"),
        "{text}"
    );
    assert!(text.contains("Exit codes:"), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
    let out = s.run(&["config", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
}
