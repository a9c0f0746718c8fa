# budget-equations.awk: recomputes every equation that `kvplan budget`'s
# table shows from the operands it shows, and nothing else: a reader's check
# that the printout adds up.  It shares no code with kvplan.
#
# - A line "A = B = C" (outside the memory budget) is checked part by part:
#   every part holding an operator (x + - / floor ceil) is evaluated with the
#   numbers it shows (words are labels and dropped) and must equal the last
#   part's figure (the exact "(N B)" when shown, else its first number).
# - The memory budget is a running computation: its first line sets the
#   value, "- V" subtracts, "x F" multiplies, "= V" must equal the running
#   value (to the rounding of F's four decimals and one floor) and carries on;
#   an "=" of 0 may stand for a negative value (nothing is left).
# - The per-kind B/token results must add up to the "= N B per token" line.
# Prints "checked N" and exits 1 on any mismatch, or when nothing was checked.

function isnum(t) { return t ~ /^[0-9][0-9,]*(\.[0-9]+)?$/ }
function val(t) { gsub(/,/, "", t); return t + 0 }
function fail(msg) { printf "%s:%d: %s\n    %s\n", FILENAME, FNR, msg, $0; bad++ }

# the numbers, operators and parentheses of s; words dropped
function tokenize(s,    raw, m, i, t) {
	gsub(/\(/, " ( ", s); gsub(/\)/, " ) ", s)
	m = split(s, raw, /[ \t;:]+/)
	ntok = 0; nops = 0
	for (i = 1; i <= m; i++) {
		t = raw[i]
		if (t == "")
			continue
		if (isnum(t)) { ntok++; tk[ntok] = val(t); ty[ntok] = "n" }
		else if (t == "x") { ntok++; tk[ntok] = "*"; ty[ntok] = "o"; nops++ }
		else if (t == "+" || t == "-" || t == "/") { ntok++; tk[ntok] = t; ty[ntok] = "o"; nops++ }
		else if (t == "(" || t == ")") { ntok++; tk[ntok] = t; ty[ntok] = "p" }
		else if (t == "floor" || t == "ceil") { ntok++; tk[ntok] = t; ty[ntok] = "f"; nops++ }
	}
	pos = 1; perr = 0
}
function peek() { return pos <= ntok ? tk[pos] : "" }
function expr(    v, o) {
	v = term()
	while (pos <= ntok && ty[pos] == "o" && (tk[pos] == "+" || tk[pos] == "-")) {
		o = tk[pos++]
		v = o == "+" ? v + term() : v - term()
	}
	return v
}
function term(    v, o, d) {
	v = factor()
	while (pos <= ntok && ty[pos] == "o" && (tk[pos] == "*" || tk[pos] == "/")) {
		o = tk[pos++]
		if (o == "*")
			v *= factor()
		else {
			d = factor()
			if (d == 0) { perr = 1; return 0 }
			v /= d
		}
	}
	return v
}
function factor(    v, fn) {
	if (pos > ntok) { perr = 1; return 0 }
	if (ty[pos] == "n")
		return tk[pos++]
	if (ty[pos] == "f") {
		fn = tk[pos++]
		if (peek() != "(") { perr = 1; return 0 }
		pos++; v = expr()
		if (peek() != ")") { perr = 1; return 0 }
		pos++
		return fn == "ceil" && v > int(v) ? int(v) + 1 : int(v)
	}
	if (tk[pos] == "(") {
		pos++; v = expr()
		if (peek() != ")") { perr = 1; return 0 }
		pos++
		return v
	}
	perr = 1
	return 0
}
# the figure a result part stands for
function result(s,    m, t, i, raw) {
	if (match(s, /\([0-9][0-9,]* B\)/))
		return val(substr(s, RSTART + 1, RLENGTH - 4))
	m = split(s, raw, /[ \t(]+/)
	for (i = 1; i <= m; i++)
		if (isnum(raw[i]))
			return val(raw[i])
	return -1
}
function exact_bytes(s) {
	if (match(s, /\([0-9][0-9,]* B\)[ \t]*$/))
		return val(substr(s, RSTART + 1, RLENGTH - 4))
	return -1
}
function absd(a) { return a < 0 ? -a : a }

/^KV cache per token/ { section = "kv"; kindsum = 0; next }
/^Memory budget/ { section = "mem"; started = 0; tol = 0; next }
/^Paging/ { section = "paging"; next }
/^$/ { section = (section == "mem" ? "" : section); next }

section == "mem" {
	line = $0
	sub(/^[ \t]+/, "", line)
	if (line ~ /^\(/ || line ~ /^The /)
		next
	if (!started) {                         # the first line: GPU memory
		started = 1
		running = exact_bytes(line)
		if (running < 0)
			fail("no exact bytes on the first budget line")
		checked++
		next
	}
	op = substr(line, 1, 1)
	if (op == "x") {
		n = split(line, f, /[ \t]+/)
		if (!isnum(f[n])) { fail("a factor line must end with its factor"); next }
		tol += running * 0.00005 + 1
		running *= val(f[n])
		next
	}
	v = exact_bytes(line)
	if (v < 0) { fail("no exact bytes on a budget line"); next }
	if (op == "-") { running -= v; next }
	if (op == "=") {
		checked++
		if (absd(running - v) > tol + 1 && !(v == 0 && running < 0))
			fail(sprintf("running value %.0f, shown %.0f", running, v))
		running = v; tol = 0
		next
	}
	fail("a budget line that is neither - x nor =")
	next
}

/ = / {
	n = split($0, part, / = /)
	want = result(part[n])
	for (i = 1; i < n; i++) {
		tokenize(part[i])
		if (!nops)
			continue
		got = expr()
		if (perr || pos <= ntok) { fail("cannot read the expression '" part[i] "'"); continue }
		checked++
		if (want < 0 || absd(got - want) > 0.5 + 1e-12 * want)
			fail(sprintf("'%s' is %.6g, shown %.0f", part[i], got, want))
	}
	if (section == "kv" && part[n] ~ /B\/token/)
		kindsum += want
	if (section == "kv" && part[1] ~ /^[ \t]*$/) {
		checked++
		if (kindsum != want)
			fail(sprintf("the kinds add up to %.0f, shown %.0f", kindsum, want))
	}
}

END {
	printf "checked %d\n", checked
	exit (bad || !checked) ? 1 : 0
}
