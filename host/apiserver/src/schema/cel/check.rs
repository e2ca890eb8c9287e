//! Compiling a rule as kube-apiserver's CEL checker would: parse (cel-go's own syntax
//! errors), then resolve every field, variable and function against the schema node the
//! rule sits on, and require a bool result. Errors are worded and positioned as cel-go
//! prints them (`ERROR: <input>:1:6: undefined field 'foo'` with the source line and a
//! caret).
//!
//! The checker infers types only as far as the schema says: a value under
//! `x-kubernetes-preserve-unknown-fields`, an int-or-string, or the result of a function it
//! has no signature for is `dyn` and passes every check, as in cel-go.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use cel::common::ast::{Expr, LiteralValue};
use cel::{IdedExpr, Program};
use serde_json::Value;

use super::super::node::{self, Additional};
use super::library;
use super::values::property_named;

/// A CEL type as far as the checker knows it. `Schema` is a value typed by its schema node.
#[derive(Debug, Clone)]
pub(crate) enum Ty<'s> {
    Schema(&'s Value),
    Bool,
    Int,
    Double,
    String,
    Null,
    List(Box<Ty<'s>>),
    Map(Box<Ty<'s>>),
    Optional(Box<Ty<'s>>),
    Dyn,
}

impl<'s> Ty<'s> {
    /// The type a schema node gives its values, one level deep.
    pub(crate) fn resolve(&self) -> Ty<'s> {
        let Ty::Schema(s) = self else {
            return self.clone();
        };
        if node::flag(s, "x-kubernetes-int-or-string") {
            return Ty::Dyn;
        }
        match node::type_of(s) {
            "boolean" => Ty::Bool,
            "integer" => Ty::Int,
            "number" => Ty::Double,
            "string" => Ty::String,
            "array" => node::items(s).map_or(Ty::List(Box::new(Ty::Dyn)), |i| {
                Ty::List(Box::new(Ty::Schema(i)))
            }),
            "object" if node::properties(s).is_some() => Ty::Schema(s),
            "object" => match node::additional(s) {
                Additional::Schema(values) => Ty::Map(Box::new(Ty::Schema(values))),
                _ => Ty::Dyn,
            },
            _ => Ty::Dyn,
        }
    }

    fn is_bool_or_dyn(&self) -> bool {
        matches!(self.resolve(), Ty::Bool | Ty::Dyn)
    }
}

/// A rule that compiled, and what the evaluator needs to know of it.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub program: Program,
    pub uses_old_self: bool,
    /// The members of `self` and `oldSelf` the program reads (`self.a`, `has(self.b)`), by
    /// their CEL names; `None` when it uses a whole value (`self == oldSelf`, `self.all(..)`,
    /// `self[k]`). A value is converted for CEL with only these members.
    pub members: Option<Vec<String>>,
}

/// The members of `self`/`oldSelf` an expression reads, `None` when it uses one whole.
fn members_read(expr: &IdedExpr) -> Option<Vec<String>> {
    fn visit(e: &IdedExpr, out: &mut Vec<String>) -> bool {
        let is_value =
            |x: &IdedExpr| matches!(&x.expr, Expr::Ident(n) if n == "self" || n == "oldSelf");
        match &e.expr {
            Expr::Ident(name) => name != "self" && name != "oldSelf",
            Expr::Select(select) if is_value(&select.operand) => {
                if !out.contains(&select.field) {
                    out.push(select.field.clone());
                }
                true
            }
            Expr::Select(select) => visit(&select.operand, out),
            Expr::Call(call) => {
                call.target.as_deref().is_none_or(|t| visit(t, out))
                    && call.args.iter().all(|a| visit(a, out))
            }
            Expr::Comprehension(c) => [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ]
            .into_iter()
            .all(|x| visit(x, out)),
            Expr::List(list) => list.elements.iter().all(|x| visit(x, out)),
            Expr::Map(map) => map.entries.iter().all(|entry| match &entry.expr {
                cel::common::ast::EntryExpr::MapEntry(m) => {
                    visit(&m.key, out) && visit(&m.value, out)
                }
                _ => false,
            }),
            Expr::Literal(_) => true,
            _ => false,
        }
    }
    let mut out = Vec::new();
    visit(expr, &mut out).then_some(out)
}

/// Compiles `source` for a rule on `schema`: `optional_old_self` declares `oldSelf` as an
/// optional of the node's type (else the node's type); `want_bool` asks for a rule's bool
/// result (else a `messageExpression`'s string). The error is the detail kube prints after
/// the rule.
pub(crate) fn compile(
    source: &str,
    schema: &Value,
    optional_old_self: bool,
    want_bool: bool,
) -> Result<Arc<Compiled>, String> {
    let compiled = parse(source).map_err(|e| format!("compilation failed: {e}"))?;
    let self_ty = Ty::Schema(schema);
    let old_ty = if optional_old_self {
        Ty::Optional(Box::new(self_ty.clone()))
    } else {
        self_ty.clone()
    };
    let mut checker = Checker {
        program: &compiled.program,
        source,
        errors: Vec::new(),
    };
    let mut scope: Vec<(String, Ty<'_>)> =
        vec![("self".into(), self_ty), ("oldSelf".into(), old_ty)];
    let ty = checker.infer(compiled.program.expression(), &mut scope);
    if !checker.errors.is_empty() {
        return Err(format!("compilation failed: {}", checker.errors.join("\n")));
    }
    if want_bool && !ty.is_bool_or_dyn() {
        return Err("cel expression must evaluate to a bool".to_owned());
    }
    if !want_bool && !matches!(ty.resolve(), Ty::String | Ty::Dyn) {
        return Err("messageExpression must evaluate to a string".to_owned());
    }
    Ok(compiled)
}

/// How many parsed programs are kept; past it the cache starts over.
const PROGRAM_CACHE: usize = 1024;

/// Parses `source` once per distinct text (rules are compiled on every CRD write and
/// looked up on every custom resource write).
pub(crate) fn parse(source: &str) -> Result<Arc<Compiled>, String> {
    type Cache = Mutex<HashMap<String, Arc<Compiled>>>;
    static CACHE: LazyLock<Cache> = LazyLock::new(Default::default);
    let lookup = |cache: &Cache| {
        cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(source)
            .cloned()
    };
    if let Some(found) = lookup(&CACHE) {
        return Ok(found);
    }
    // cel-go indents the source line and the caret line by one space more than cel-rust.
    let program = library::env()
        .compile(source)
        .map_err(|e| e.to_string().replace("\n| ", "\n | "))?;
    let uses_old_self = program.references().has_variable("oldSelf");
    let members = members_read(program.expression());
    let compiled = Arc::new(Compiled {
        program,
        uses_old_self,
        members,
    });
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if cache.len() >= PROGRAM_CACHE {
        cache.clear();
    }
    cache.insert(source.to_owned(), compiled.clone());
    Ok(compiled)
}

/// Names that are namespaces or type identifiers, never variables.
const NAMESPACES: [&str; 16] = [
    "optional",
    "sets",
    "strings",
    "math",
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
    "duration",
];

/// Functions whose result type the checker knows, by name.
fn known_result<'s>(name: &str, target: Option<&Ty<'s>>, args: &[Ty<'s>]) -> Option<Ty<'s>> {
    let first = || target.or(args.first()).map(Ty::resolve).unwrap_or(Ty::Dyn);
    Some(match name {
        "_==_"
        | "_!=_"
        | "_<_"
        | "_<=_"
        | "_>_"
        | "_>=_"
        | "_&&_"
        | "_||_"
        | "!_"
        | "@not_strictly_false"
        | "@in"
        | "matches"
        | "startsWith"
        | "endsWith"
        | "contains"
        | "isSorted"
        | "hasValue"
        | "isURL"
        | "sets.contains"
        | "sets.equivalent"
        | "sets.intersects"
        | "exists"
        | "all"
        | "exists_one" => Ty::Bool,
        "size" | "int" | "indexOf" | "lastIndexOf" => Ty::Int,
        "double" => Ty::Double,
        "string" | "lowerAscii" | "upperAscii" | "trim" | "replace" | "substring" | "charAt"
        | "join" | "find" | "format" | "getScheme" | "getHost" | "getHostname" | "getPort"
        | "getEscapedPath" | "url" | "strings.quote" => Ty::String,
        "split" | "findAll" => Ty::List(Box::new(Ty::String)),
        "-_" | "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => first(),
        "sum" | "min" | "max" => match first() {
            Ty::List(elem) => elem.resolve(),
            _ => Ty::Dyn,
        },
        "value" | "orValue" => match first() {
            Ty::Optional(inner) => inner.resolve(),
            _ => Ty::Dyn,
        },
        "optional.of" | "optional.ofNonZeroValue" => {
            Ty::Optional(Box::new(args.first().cloned().unwrap_or(Ty::Dyn)))
        }
        "optional.none" => Ty::Optional(Box::new(Ty::Dyn)),
        "_?_:_" => args.get(1).map(Ty::resolve).unwrap_or(Ty::Dyn),
        "_[_]" | "_[?_]" => {
            let elem = match (first(), args.get(1)) {
                (Ty::List(elem), _) | (Ty::Map(elem), _) => elem.resolve(),
                _ => Ty::Dyn,
            };
            if name == "_[?_]" {
                Ty::Optional(Box::new(elem))
            } else {
                elem
            }
        }
        "bytes" | "uint" | "type" | "dyn" | "duration" | "timestamp" | "getQuery" | "reverse"
        | "distinct" | "flatten" | "slice" | "sort" | "or" | "optMap" | "optFlatMap"
        | "getDayOfMonth" | "getDayOfWeek" | "getDayOfYear" | "getFullYear" | "getHours"
        | "getMilliseconds" | "getMinutes" | "getMonth" | "getSeconds" | "@mapInsert" => Ty::Dyn,
        _ => return None,
    })
}

struct Checker<'p> {
    program: &'p Program,
    source: &'p str,
    errors: Vec<String>,
}

impl Checker<'_> {
    fn error(&mut self, id: u64, message: &str) {
        let offset = self
            .program
            .source_info()
            .offset_for(id)
            .map_or(0, |(start, _)| start as usize);
        self.errors
            .push(display_error(self.source, offset, message));
    }

    fn infer<'s>(&mut self, e: &IdedExpr, scope: &mut Vec<(String, Ty<'s>)>) -> Ty<'s> {
        match &e.expr {
            Expr::Literal(literal) => match literal {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::Null => Ty::Null,
                _ => Ty::Dyn,
            },
            Expr::Ident(name) => {
                if let Some((_, ty)) = scope.iter().rev().find(|(n, _)| n == name) {
                    return ty.clone();
                }
                if !NAMESPACES.contains(&name.as_str()) {
                    self.error(
                        e.id,
                        &format!("undeclared reference to '{name}' (in container '')"),
                    );
                }
                Ty::Dyn
            }
            Expr::Select(select) => {
                let operand = self.infer(&select.operand, scope);
                let field = self.field(e.id, &operand, &select.field);
                if select.test { Ty::Bool } else { field }
            }
            Expr::Call(call) => {
                let target = call.target.as_ref().map(|t| self.infer(t, scope));
                if call.func_name == "_?._" {
                    // `a.?b`: the second argument is the field name as a string literal.
                    let operand = call.args.first().map(|a| self.infer(a, scope));
                    let field = match call.args.get(1).map(|a| &a.expr) {
                        Some(Expr::Literal(LiteralValue::String(f))) => f.to_string(),
                        _ => String::new(),
                    };
                    let inner = match operand.map(|o| o.resolve()) {
                        Some(Ty::Optional(inner)) => self.field(e.id, &inner, &field),
                        Some(other) => self.field(e.id, &other, &field),
                        None => Ty::Dyn,
                    };
                    return Ty::Optional(Box::new(inner));
                }
                let args: Vec<Ty<'s>> = call.args.iter().map(|a| self.infer(a, scope)).collect();
                match known_result(&call.func_name, target.as_ref(), &args) {
                    Some(ty) => ty,
                    None => {
                        self.error(
                            e.id,
                            &format!(
                                "undeclared reference to '{}' (in container '')",
                                call.func_name
                            ),
                        );
                        Ty::Dyn
                    }
                }
            }
            Expr::Comprehension(c) => {
                let range = self.infer(&c.iter_range, scope).resolve();
                let (first, second) = match range {
                    Ty::List(elem) => (Ty::Int, elem.resolve()),
                    Ty::Map(values) => (Ty::String, values.resolve()),
                    Ty::Schema(_) => (Ty::String, Ty::Dyn),
                    _ => (Ty::Dyn, Ty::Dyn),
                };
                let accu = self.infer(&c.accu_init, scope);
                let depth = scope.len();
                match &c.iter_var2 {
                    Some(var2) => {
                        scope.push((c.iter_var.clone(), first));
                        scope.push((var2.clone(), second));
                    }
                    None => {
                        let only = if matches!(first, Ty::Int) {
                            second
                        } else {
                            first
                        };
                        scope.push((c.iter_var.clone(), only));
                    }
                }
                scope.push((c.accu_var.clone(), accu));
                self.infer(&c.loop_cond, scope);
                self.infer(&c.loop_step, scope);
                let result = self.infer(&c.result, scope);
                scope.truncate(depth);
                result
            }
            Expr::List(list) => {
                let elems: Vec<Ty<'s>> =
                    list.elements.iter().map(|x| self.infer(x, scope)).collect();
                Ty::List(Box::new(elems.into_iter().next().unwrap_or(Ty::Dyn)))
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(m) = &entry.expr {
                        self.infer(&m.key, scope);
                        self.infer(&m.value, scope);
                    }
                }
                Ty::Map(Box::new(Ty::Dyn))
            }
            _ => Ty::Dyn,
        }
    }

    /// The type of `operand.field`, reporting a field its object schema does not declare.
    fn field<'s>(&mut self, id: u64, operand: &Ty<'s>, field: &str) -> Ty<'s> {
        match operand.resolve() {
            Ty::Schema(s) => match property_named(s, field) {
                Some(property) => Ty::Schema(property),
                None if is_root_metadata(s, field) => Ty::Dyn,
                None if node::flag(s, "x-kubernetes-preserve-unknown-fields") => Ty::Dyn,
                None => {
                    self.error(id, &format!("undefined field '{field}'"));
                    Ty::Dyn
                }
            },
            Ty::Map(values) => values.resolve(),
            Ty::Dyn | Ty::Optional(_) => Ty::Dyn,
            other => {
                let name = match other {
                    Ty::Bool => "bool",
                    Ty::Int => "int",
                    Ty::Double => "double",
                    Ty::String => "string",
                    Ty::Null => "null_type",
                    _ => "list",
                };
                self.error(
                    id,
                    &format!("type '{name}' does not support field selection"),
                );
                Ty::Dyn
            }
        }
    }
}

/// A root schema reads `metadata` even when it does not declare it.
fn is_root_metadata(schema: &Value, field: &str) -> bool {
    field == "metadata" && node::property(schema, "apiVersion").is_some()
}

/// One cel-go error as `ToDisplayString` prints it: position, message, the source line and
/// a caret under the column.
pub(crate) fn display_error(source: &str, offset: usize, message: &str) -> String {
    let before: String = source.chars().take(offset).collect();
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
    let snippet = source
        .lines()
        .nth(line - 1)
        .unwrap_or_default()
        .replace('\t', " ");
    let mut indicator = String::new();
    let mut chars = snippet.chars();
    for _ in 0..column {
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => indicator.push('\u{ff0e}'),
            Some(_) => indicator.push('.'),
            None => break,
        }
    }
    indicator.push(match chars.next() {
        Some(c) if c.len_utf8() > 1 => '\u{ff3e}',
        _ => '^',
    });
    format!(
        "ERROR: <input>:{line}:{}: {message}\n | {snippet}\n | {indicator}",
        column + 1
    )
}
