//! JavaScript and TypeScript modules that define what they offer by
//! assignment (`module.exports = …`, `exports.name = …`) or as an anonymous
//! default export: the exported function or class is a symbol, named as
//! the module system names it, and found by name in the index.

use super::{assert_symbol, chunks, Indexed};

const COLLECT: &str = "'use strict';\n\
    const path = require('path');\n\
    \n\
    /** Collects the spec files. */\n\
    module.exports = ({ spec = [], extension = [] } = {}) => {\n\
    \x20 const files = spec.map((f) => path.resolve(f));\n\
    \x20 return files.filter((f) => extension.some((e) => f.endsWith(e)));\n\
    };\n";

const HELPERS: &str = "exports.lookupFiles = function lookupFiles(filepath, extensions) {\n\
    \x20 return [filepath].concat(extensions);\n\
    };\n\
    \n\
    module.exports.Runner = class {\n\
    \x20 run() {\n\
    \x20   return exports.lookupFiles('.', []);\n\
    \x20 }\n\
    };\n\
    \n\
    [1, 2].forEach(function each(x) {\n\
    \x20 console.log(x);\n\
    });\n";

const SAME_ORIGIN: &str = "import platform from '../platform/index.js';\n\
    \n\
    export default function (origin) {\n\
    \x20 const url = new URL(origin, platform.origin);\n\
    \x20 return url.host === platform.host;\n\
    }\n";

#[test]
fn commonjs_exports_are_symbols_named_as_exported() {
    let c = chunks("lib/cli/collect-files.cjs", COLLECT);
    assert_symbol(&c, "default", "default", "function", (4, 8));
    let c = chunks("lib/utils.js", HELPERS);
    assert_symbol(&c, "lookupFiles", "lookupFiles", "function", (1, 3));
    assert_symbol(&c, "Runner", "Runner", "class", (5, 9));
    // A callback passed to a call is not a definition.
    assert!(
        c.iter()
            .all(|x| x.symbol.as_ref().is_none_or(|s| s.name != "each")),
        "{c:#?}"
    );
}

#[test]
fn an_anonymous_default_export_is_named_default() {
    let c = chunks("lib/helpers/isURLSameOrigin.js", SAME_ORIGIN);
    assert_symbol(&c, "default", "default", "function", (3, 6));
    let c = chunks(
        "src/sameOrigin.ts",
        "export default (origin: string) => (url: string) => {\n  return origin === url;\n};\n",
    );
    assert_symbol(&c, "default", "default", "function", (1, 3));
}

#[test]
fn a_commonjs_export_is_found_by_name() {
    let ix = Indexed::new(&[
        ("lib/utils.js", HELPERS),
        ("lib/cli/collect-files.cjs", COLLECT),
    ]);
    assert_eq!(ix.defined("lookupFiles"), ["lib/utils.js#lookupFiles"]);
    assert_eq!(ix.defined("Runner"), ["lib/utils.js#Runner"]);
}

/// Generic call signatures one after another without separators
/// (redux-toolkit's `TakePattern`): the grammar alone reads the second `<`
/// as continuing the first's return type and the rest of the file as one
/// error.
#[test]
fn typescript_generic_call_signatures_keep_the_rest_of_the_file() {
    let text = "export interface TakePattern<State> {\n\
                \x20 <Predicate extends AnyPredicate<State>>(\n\
                \x20   predicate: Predicate,\n\
                \x20 ): Output<State, Predicate>\n\
                \x20 <Predicate extends AnyPredicate<State>>(\n\
                \x20   predicate: Predicate,\n\
                \x20   timeout: number,\n\
                \x20 ): OutputWithTimeout<State, Predicate>\n\
                }\n\
                \n\
                export interface ListenerApi<State> {\n\
                \x20 take: TakePattern<State>\n\
                \x20 cancel(): void\n\
                }\n\
                \n\
                export function createListener<State>(state: State): ListenerApi<State> {\n\
                \x20 return { take: take(state), cancel() {} }\n\
                }\n";
    let c = chunks("src/listenerMiddleware/types.ts", text);
    assert_symbol(&c, "TakePattern", "TakePattern", "interface", (1, 9));
    assert_symbol(&c, "ListenerApi", "ListenerApi", "interface", (11, 14));
    assert_symbol(&c, "createListener", "createListener", "function", (16, 18));
}
