//! Lua: `function M.f`, `function T:m`, `local function f` and functions
//! assigned to a name (`M.f = function`, `local f = function`), with the
//! `---` doc comments above them; method and field calls; `require`
//! resolves on the `lua/` path.

use super::{assert_symbol, chunks, Indexed};

const INVOICE: &str = include_str!("fixtures/lua/lua/billing/invoice.lua");
const TAX_TABLE: &str = include_str!("fixtures/lua/lua/billing/tax_table.lua");

const PATH: &str = "lua/billing/invoice.lua";

#[test]
fn lua_functions_have_their_names_and_lines() {
    let c = chunks(PATH, INVOICE);
    // The three `---` lines above it are its doc comment.
    assert_symbol(&c, "M.new", "new", "function", (10, 19));
    assert_symbol(&c, "Invoice:add_item", "add_item", "method", (21, 28));
    assert_symbol(&c, "round_cents", "round_cents", "function", (43, 45));
    assert_symbol(&c, "M.describe", "describe", "function", (47, 49));
    assert_symbol(&c, "format_line", "format_line", "function", (51, 53));
    assert_symbol(&c, "M.from_order", "from_order", "function", (55, 61));
}

#[test]
fn lua_definitions_calls_and_requires_resolve() {
    let tax_path = "lua/billing/tax_table.lua";
    let ix = Indexed::new(&[(PATH, INVOICE), (tax_path, TAX_TABLE)]);
    assert_eq!(
        ix.defined("tax_on"),
        ["lua/billing/tax_table.lua#TaxTable:tax_on"]
    );
    assert_eq!(
        ix.call(PATH, "Invoice:total", "tax_on").as_deref(),
        Some("lua/billing/tax_table.lua#TaxTable:tax_on")
    );
    assert_eq!(
        ix.call(PATH, "M.new", "for_region").as_deref(),
        Some("lua/billing/tax_table.lua#M.for_region")
    );
    assert_eq!(
        ix.call(PATH, "M.from_order", "add_item").as_deref(),
        Some("lua/billing/invoice.lua#Invoice:add_item")
    );
    assert_eq!(
        ix.import(PATH, "billing.tax_table").as_deref(),
        Some(tax_path)
    );
    // `require "x"` without parentheses is an import too.
    assert_eq!(ix.import(PATH, "billing.util"), None);
}
