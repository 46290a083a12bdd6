// SPDX-License-Identifier: MIT
// PEtab formulas (observable and noise formulas), parsed by a small recursive-descent parser
// into the model's ExprPool: + - * / ^ (also **), unary minus, numbers, identifiers and the
// functions exp, log (1 argument: natural; 2 arguments: log(x, base)), ln, log10, log2, sqrt,
// abs, pow, sin, cos, tan, sinh, cosh, tanh, floor, ceil.
#pragma once

#include <functional>
#include <string>

#include "core/symbolic/expression.h"

namespace sensode::petab {

// Parses a formula into `pool`; `resolve` maps an identifier to an expression or throws
// PetabError. Throws PetabError with `where` ("observables table, row 3, column
// observableFormula") on a syntax error.
symbolic::Expr parseFormula(const std::string& text, symbolic::ExprPool& pool,
                            const std::function<symbolic::Expr(const std::string&)>& resolve,
                            const std::string& where);

}  // namespace sensode::petab
