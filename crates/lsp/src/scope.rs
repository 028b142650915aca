//! Which definition each name in a document refers to, found from the
//! syntax tree alone (so it works on a document with type errors): the
//! language's lexical scopes — top-level functions and structs visible
//! everywhere, a `let`/`var` from the statement after it to the end of
//! its block, parameters in their function's body, a `for` or `match`
//! pattern's names in its body — give every `Name` expression (an
//! assignment's target included) its binding. Go to definition and
//! rename read it; names it cannot bind (builtins, operations, module
//! members) are the checker's.

use twill_syntax::ast::{
    Block, Expr, ExprKind, FPart, FnDecl, IndexItem, Pattern, PatternKind, Program, StmtKind,
};
use twill_syntax::Span;

/// What introduced a binding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Local,
    Function,
    Struct,
    Import,
}

pub(crate) struct Binding {
    pub(crate) name: String,
    /// The name where it is defined.
    pub(crate) span: Span,
    pub(crate) kind: Kind,
}

/// Every binding of a document, and every use of one.
#[derive(Default)]
pub(crate) struct Scopes {
    pub(crate) bindings: Vec<Binding>,
    /// The span of each use, and the binding it refers to.
    pub(crate) uses: Vec<(Span, usize)>,
    stack: Vec<Vec<(String, usize)>>,
}

impl Scopes {
    pub(crate) fn of(program: &Program) -> Scopes {
        let mut s = Scopes::default();
        s.block(&program.stmts);
        s
    }

    /// The binding defined or used at byte `at`.
    pub(crate) fn at(&self, at: usize) -> Option<usize> {
        let inside = |span: &Span| (span.start as usize) <= at && at <= span.end as usize;
        self.bindings
            .iter()
            .position(|b| inside(&b.span))
            .or_else(|| self.uses.iter().find(|(span, _)| inside(span)).map(|(_, b)| *b))
    }

    /// Every span naming binding `b`: its definition first, then its uses.
    pub(crate) fn spans(&self, b: usize) -> Vec<Span> {
        let mut out: Vec<Span> = self.bindings.get(b).map(|d| d.span).into_iter().collect();
        out.extend(self.uses.iter().filter(|(_, u)| *u == b).map(|(s, _)| *s));
        out
    }

    fn declare(&mut self, name: &str, span: Span, kind: Kind) {
        if name == "_" {
            return;
        }
        self.bindings.push(Binding {
            name: name.to_string(),
            span,
            kind,
        });
        let id = self.bindings.len() - 1;
        if let Some(scope) = self.stack.last_mut() {
            scope.push((name.to_string(), id));
        }
    }

    fn lookup(&mut self, name: &str, span: Span) {
        let found = self
            .stack
            .iter()
            .rev()
            .find_map(|scope| scope.iter().rev().find(|(n, _)| n == name).map(|(_, id)| *id));
        if let Some(id) = found {
            self.uses.push((span, id));
        }
    }

    /// A block's statements in a scope of their own; its functions and
    /// structs are visible from its start (so they may call each other).
    fn block(&mut self, stmts: &[twill_syntax::ast::Stmt]) {
        self.stack.push(Vec::new());
        for stmt in stmts {
            match &stmt.kind {
                StmtKind::Fn(f) => {
                    if let Some(name) = &f.name {
                        self.declare(&name.name, name.span, Kind::Function);
                    }
                }
                StmtKind::Struct(d) => self.declare(&d.name.name, d.name.span, Kind::Struct),
                StmtKind::Let { .. }
                | StmtKind::LetPattern { .. }
                | StmtKind::Assign { .. }
                | StmtKind::Expr(_)
                | StmtKind::Return(_)
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Import(_)
                | StmtKind::Error => {}
            }
        }
        for stmt in stmts {
            match &stmt.kind {
                StmtKind::Let { name, value, .. } => {
                    self.expr(value);
                    self.declare(&name.name, name.span, Kind::Local);
                }
                StmtKind::LetPattern { pattern, value, .. } => {
                    self.expr(value);
                    self.pattern(pattern);
                }
                StmtKind::Assign { target, value, .. } => {
                    self.expr(target);
                    self.expr(value);
                }
                StmtKind::Fn(f) => self.function(f),
                StmtKind::Expr(e) | StmtKind::Return(Some(e)) => self.expr(e),
                StmtKind::Import(i) => {
                    let span = i
                        .alias
                        .as_ref()
                        .map_or_else(|| i.path.first().map_or(stmt.span, |p| p.span), |(_, a)| a.span);
                    self.declare(&i.binding(), span, Kind::Import);
                }
                StmtKind::Struct(_)
                | StmtKind::Return(None)
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Error => {}
            }
        }
        self.stack.pop();
    }

    fn function(&mut self, f: &FnDecl) {
        for p in &f.params {
            if let Some(d) = &p.default {
                self.expr(d);
            }
        }
        self.stack.push(Vec::new());
        for p in &f.params {
            self.declare(&p.name.name, p.name.span, Kind::Local);
        }
        self.block(&f.body.stmts);
        self.stack.pop();
    }

    fn pattern(&mut self, p: &Pattern) {
        match &p.kind {
            PatternKind::Name(n) if n.name != "None" => self.declare(&n.name, n.span, Kind::Local),
            PatternKind::Ctor { args, .. } | PatternKind::Tuple(args) => {
                for a in args {
                    self.pattern(a);
                }
            }
            PatternKind::Name(_)
            | PatternKind::Int(_)
            | PatternKind::Float(_)
            | PatternKind::Str(_)
            | PatternKind::Bool(_) => {}
        }
    }

    fn scoped_block(&mut self, b: &Block) {
        self.block(&b.stmts);
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.lookup(n, e.span),
            ExprKind::FStr(parts) => {
                for part in parts.iter() {
                    if let FPart::Field { value, spec } = part {
                        self.expr(value);
                        for (e, _) in spec.iter().flat_map(|s| &s.fields) {
                            self.expr(e);
                        }
                    }
                }
            }
            ExprKind::List(items) | ExprKind::Tuple(items) => {
                for i in items {
                    self.expr(i);
                }
            }
            ExprKind::Dict(pairs) => {
                for (k, v) in pairs.iter() {
                    self.expr(k);
                    self.expr(v);
                }
            }
            ExprKind::Neg(x) | ExprKind::Not(x) | ExprKind::Try(x) => self.expr(x),
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Call { callee, args } => {
                self.expr(callee);
                for a in args.iter() {
                    self.expr(&a.value);
                }
            }
            ExprKind::MethodCall(m) => {
                self.expr(&m.receiver);
                for a in &m.args {
                    self.expr(&a.value);
                }
            }
            ExprKind::Field { base, .. } => self.expr(base),
            ExprKind::Index { base, items } => {
                self.expr(base);
                for item in items.iter() {
                    match item {
                        IndexItem::Single(x) => self.expr(x),
                        IndexItem::Slice { start, stop, step } => {
                            for x in [start, stop, step].into_iter().flatten() {
                                self.expr(x);
                            }
                        }
                        IndexItem::Ellipsis => {}
                    }
                }
            }
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond);
                self.scoped_block(then);
                if let Some(o) = otherwise {
                    self.expr(o);
                }
            }
            ExprKind::While { cond, body } => {
                self.expr(cond);
                self.scoped_block(body);
            }
            ExprKind::For { var, iter, body } => {
                self.expr(iter);
                self.stack.push(Vec::new());
                self.pattern(var);
                self.scoped_block(body);
                self.stack.pop();
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for arm in arms.iter() {
                    self.stack.push(Vec::new());
                    self.pattern(&arm.pattern);
                    self.expr(&arm.body);
                    self.stack.pop();
                }
            }
            ExprKind::Block(b) => self.scoped_block(b),
            ExprKind::Lambda(f) => self.function(f),
            ExprKind::StructLit { name, fields } => {
                self.lookup(&name.name, name.span);
                for (_, v) in fields.iter() {
                    self.expr(v);
                }
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::Error => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(src: &str) -> Scopes {
        Scopes::of(&twill_syntax::parse(src, twill_syntax::FileId::default()).program)
    }

    #[test]
    fn shadowing_params_and_loops() {
        let src = "let x = 1\nfn f(x) { x + 1 }\nfor i in range(3) { print(i, x) }\nx = 2\n";
        let s = scopes(src);
        let top = s.at(src.find("x").unwrap()).unwrap();
        // The top-level x: defined once, used in the loop and assigned.
        let texts: Vec<usize> = s.spans(top).iter().map(|sp| sp.start as usize).collect();
        assert_eq!(
            texts,
            vec![4, src.find("i, x").unwrap() + 3, src.rfind("x = 2").unwrap()]
        );
        // The parameter x is another binding.
        let param = s.at(src.find("f(x").unwrap() + 2).unwrap();
        assert_ne!(param, top);
        assert_eq!(s.spans(param).len(), 2);
    }

    #[test]
    fn functions_are_visible_before_their_definition() {
        let src = "fn a() { b() }\nfn b() { 1 }\n";
        let s = scopes(src);
        let b = s.at(src.find("b()").unwrap()).unwrap();
        assert_eq!(s.bindings[b].kind, Kind::Function);
        assert_eq!(s.bindings[b].span.start as usize, src.rfind("b()").unwrap());
    }
}
