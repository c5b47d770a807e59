//! Kotlin: classes, interfaces and objects hold their functions, a
//! companion object's members are scoped by it, KDoc belongs to the
//! definition below; a constructor call calls its class; imports resolve
//! under the usual source roots.

use super::{assert_symbol, chunks, Indexed};

const INVOICE: &str = include_str!("fixtures/kotlin/src/main/kotlin/billing/Invoice.kt");
const TAX_TABLE: &str = include_str!("fixtures/kotlin/src/main/kotlin/billing/tax/TaxTable.kt");

const PATH: &str = "src/main/kotlin/billing/Invoice.kt";

#[test]
fn kotlin_symbols_have_their_names_and_lines() {
    let c = chunks(PATH, INVOICE);
    assert_symbol(&c, "Invoice", "Invoice", "class", (9, 39));
    assert_symbol(&c, "Invoice.addItem", "addItem", "function", (15, 22));
    assert_symbol(
        &c,
        "Invoice.Companion.fromOrder",
        "fromOrder",
        "function",
        (30, 37),
    );
    assert_symbol(&c, "InvoiceSink", "InvoiceSink", "interface", (43, 45));
    assert_symbol(
        &c,
        "InvoiceFormatter.format",
        "format",
        "function",
        (48, 48),
    );
    // An extension function is named by its function name.
    assert_symbol(&c, "isFree", "isFree", "function", (51, 51));
}

#[test]
fn kotlin_definitions_calls_and_imports_resolve() {
    let tax_path = "src/main/kotlin/billing/tax/TaxTable.kt";
    let ix = Indexed::new(&[(PATH, INVOICE), (tax_path, TAX_TABLE)]);
    assert_eq!(
        ix.defined("taxOn"),
        ["src/main/kotlin/billing/tax/TaxTable.kt#TaxTable.taxOn"]
    );
    assert_eq!(
        ix.call(PATH, "Invoice.total", "taxOn").as_deref(),
        Some("src/main/kotlin/billing/tax/TaxTable.kt#TaxTable.taxOn")
    );
    assert_eq!(
        ix.call(PATH, "Invoice.Companion.fromOrder", "addItem")
            .as_deref(),
        Some("src/main/kotlin/billing/Invoice.kt#Invoice.addItem")
    );
    // `InvoiceException(…)` constructs the class.
    assert_eq!(
        ix.call(PATH, "Invoice.addItem", "InvoiceException")
            .as_deref(),
        Some("src/main/kotlin/billing/Invoice.kt#InvoiceException")
    );
    assert_eq!(
        ix.import(PATH, "billing.tax.TaxTable").as_deref(),
        Some(tax_path)
    );
    assert_eq!(ix.import(PATH, "java.math.BigDecimal"), None);
}

/// A primary constructor with an annotation on its own line (kotlinx
/// coroutines' `ChannelResult`): the grammar alone ends the class header
/// there and parses the rest of the file as one error, losing every
/// definition after it.
#[test]
fn kotlin_annotated_constructor_on_its_own_line_keeps_the_rest_of_the_file() {
    let text = "package channels\n\
                \n\
                @JvmInline\n\
                public value class ChannelResult<out T>\n\
                @PublishedApi internal constructor(@PublishedApi internal val holder: Any?) {\n\
                \x20   public val isSuccess: Boolean get() = holder !is Failed\n\
                \x20   public fun getOrNull(): T? = holder as T?\n\
                }\n\
                \n\
                /** Closes the channel, \"é\" included. */\n\
                public fun closeAll(reason: String): Int {\n\
                \x20   val text = \"closed: $reason\"\n\
                \x20   return text.length\n\
                }\n";
    let c = chunks("channels/Channel.kt", text);
    // Lines 3-8: the annotations are part of the class's chunk, whose
    // text is read from the file.
    assert_symbol(&c, "ChannelResult", "ChannelResult", "class", (3, 8));
    assert_symbol(
        &c,
        "ChannelResult.getOrNull",
        "getOrNull",
        "function",
        (7, 7),
    );
    assert_symbol(&c, "closeAll", "closeAll", "function", (10, 14));
}

/// A guard on a `when` branch (Kotlin 2.1, Exposed's `ColumnType.kt`): the
/// grammar alone parses the rest of the file as one error.
#[test]
fn kotlin_when_guards_keep_the_rest_of_the_file() {
    let text = "class AutoInc(val seq: String?) {\n\
                \x20   private fun resolve(t: ColumnType): String = when (t) {\n\
                \x20       is IntegerColumnType if seq != null -> \"int\"\n\
                \x20       !is LongColumnType if (seq ?: \"0\") >= \"8.0\" -> if (t.nullable) \"a\" else \"b\"\n\
                \x20       is BlobColumnType if (\n\
                \x20           t.nullable && seq != null\n\
                \x20           ) -> \"blob\"\n\
                \x20       else -> \"other\"\n\
                \x20   }\n\
                \n\
                \x20   fun next(): String = seq ?: \"none\"\n\
                }\n\
                \n\
                fun after(x: Int): Int {\n\
                \x20   return x\n\
                }\n";
    let c = chunks("core/ColumnType.kt", text);
    assert_symbol(&c, "AutoInc.resolve", "resolve", "function", (2, 9));
    assert_symbol(&c, "AutoInc.next", "next", "function", (11, 11));
    assert_symbol(&c, "after", "after", "function", (14, 16));
}

/// An annotated property accessor (`val identifier` / `@OptIn(…)` /
/// `get() = …`, Exposed's `Schema.kt`): the grammar alone parses the rest
/// of the class as one error.
#[test]
fn kotlin_annotated_accessors_keep_the_rest_of_the_class() {
    let text = "data class Schema(\n\
                \x20   private val name: String,\n\
                ) {\n\
                \x20   val identifier\n\
                \x20       @OptIn(InternalApi::class)\n\
                \x20       get() = name.uppercase()\n\
                \n\
                \x20   var owner: String? = null\n\
                \x20       @InternalApi set(value) {\n\
                \x20           field = value\n\
                \x20       }\n\
                \n\
                \x20   fun createStatement(): List<String> {\n\
                \x20       return listOf(identifier)\n\
                \x20   }\n\
                }\n";
    let c = chunks("core/Schema.kt", text);
    assert_symbol(&c, "Schema", "Schema", "class", (1, 16));
    assert_symbol(
        &c,
        "Schema.createStatement",
        "createStatement",
        "function",
        (13, 15),
    );
}

/// `suspend` as a name in an expression (kotlinx-coroutines' `Semaphore.kt`:
/// a parameter called `suspend`, called and passed by name): the grammar
/// takes it for the modifier and parses the rest of the file as one error.
/// The modifier and function types stay as they are.
#[test]
fn kotlin_suspend_as_a_name_keeps_the_rest_of_the_file() {
    let text = "internal open class SemaphoreImpl(private val permits: Int) {\n\
                \x20   protected fun acquire(waiter: Waiter) = acquire(\n\
                \x20       waiter = waiter,\n\
                \x20       suspend = { cont -> addAcquireToQueue(cont) },\n\
                \x20       onAcquired = { cont -> cont.resume(Unit) }\n\
                \x20   )\n\
                \n\
                \x20   private inline fun <W> acquire(waiter: W, suspend: (waiter: W) -> Boolean) {\n\
                \x20       while (true) {\n\
                \x20           if (suspend(waiter)) return\n\
                \x20       }\n\
                \x20   }\n\
                \n\
                \x20   suspend fun release(block: suspend (Int) -> Unit, other: suspend() -> Unit) {\n\
                \x20       block(permits)\n\
                \x20   }\n\
                }\n\
                \n\
                fun after(x: Int): Int {\n\
                \x20   return x\n\
                }\n";
    let c = chunks("sync/Semaphore.kt", text);
    assert_symbol(&c, "SemaphoreImpl", "SemaphoreImpl", "class", (1, 17));
    assert_symbol(&c, "SemaphoreImpl.release", "release", "function", (14, 16));
    assert_symbol(&c, "after", "after", "function", (19, 21));
}

/// `where` (a parameter of Exposed's dialects, `where: Op<Boolean>?`)
/// starting a member access on a statement of its own (`where?.let`): the
/// grammar reads a type-constraint clause of the statement before, and in
/// Exposed's `SQLiteDialect.kt` (reduced here to what still shows it) the
/// whole file was one parse error, its later members lost.
#[test]
fn kotlin_where_as_a_name_keeps_the_rest_of_the_file() {
    let text = "internal object SQLiteDataTypeProvider : DataTypeProvider() {\n\
                \x20   override fun jsonBType(): String {\n\
                \x20   }\n\
                }\n\
                internal object SQLiteFunctionProvider : FunctionProvider() {\n\
                \x20   override fun concat(separator: String, queryBuilder: QueryBuilder, vararg expr: Expression<*>) = queryBuilder {\n\
                \x20       if (separator == \"\") {\n\
                \x20       }\n\
                \x20   }\n\
                \x20   override fun <T : String?> regexp(\n\
                \x20   ) {\n\
                \x20   }\n\
                \x20   override fun <T> varPop(\n\
                \x20   ) {\n\
                \x20       if (path.size > 1) {\n\
                \x20       }\n\
                \x20   }\n\
                \x20   override fun insert(\n\
                \x20   ): String {\n\
                \x20   }\n\
                \x20   override fun replace(\n\
                \x20   ): String {\n\
                \x20   }\n\
                \x20   override fun upsert(\n\
                \x20   ): String = with(QueryBuilder(true)) {\n\
                \x20       if (keyColumns.isNotEmpty()) {\n\
                \x20           keyColumns.appendTo(prefix = \" (\", postfix = \")\") { column ->\n\
                \x20           }\n\
                \x20       }\n\
                \x20       onUpdate.appendTo { (columnToUpdate, updateExpression) ->\n\
                \x20       }\n\
                \x20       where?.let {\n\
                \x20       }\n\
                \x20       queryBuilder { +\"EXCLUDED.$columnName\" }\n\
                \x20   }\n\
                \x20   override fun queryLimitAndOffset(size: Int?, offset: Long, alreadyOrdered: Boolean): String {\n\
                \x20       if (size == null && offset > 0) {\n\
                \x20       }\n\
                \x20   }\n\
                \x20   override fun explain(\n\
                \x20   ): String {\n\
                \x20       if (analyze || options != null) {\n\
                \x20       }\n\
                \x20   }\n\
                \x20   override fun returning(\n\
                \x20   ): String {\n\
                \x20       return with(QueryBuilder(true)) {\n\
                \x20       }\n\
                \x20   }\n\
                }\n\
                /**\n\
                \x20*/\n\
                open class SQLiteDialect : VendorDialect(dialectName, SQLiteDataTypeProvider, SQLiteFunctionProvider) {\n\
                \x20   override fun createIndex(index: Index): String {\n\
                \x20   }\n\
                }\n";
    let c = chunks("vendors/SQLiteDialect.kt", text);
    for (qualified, name) in [
        ("SQLiteFunctionProvider.upsert", "upsert"),
        ("SQLiteFunctionProvider.explain", "explain"),
        ("SQLiteFunctionProvider.returning", "returning"),
        ("SQLiteDialect.createIndex", "createIndex"),
    ] {
        assert!(
            c.iter().any(|ch| ch
                .symbol
                .as_ref()
                .is_some_and(|s| s.qualified == qualified && s.name == name)),
            "no symbol {qualified}"
        );
    }
}
