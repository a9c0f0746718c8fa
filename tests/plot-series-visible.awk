# plot-series-visible.awk: every series a chart's legend names can be seen.
# Usage: awk -f plot-series-visible.awk NAME.gp NAME.dat
#
# Reads the plot commands of the script (data block `index K`, column `$N`,
# axis, points or lines, legend title) and the numbers of the data file, and
# shares no code with kvplan.  A series is visible when one of its points
# differs by more than 1 % from every other series' point on the same axis
# of its panel (lines: at the same x; points: anywhere); otherwise its legend
# title must name the series it lies on ("(= ...)") or a "# note:" of the
# data file must name it.  A series so named is drawn as open rings and hides
# nothing beneath it.  A segment of stacked bars is visible when it has
# height in some bar.
# Prints "series N" and exits 1 on a hidden series or when none was read.

function fail(msg) { printf "%s: %s\n", FILENAME, msg; bad++ }
function unquote(s,    out) {           # a gnuplot '...' string, '' for '
	out = ""
	while (match(s, /''/)) { out = out substr(s, 1, RSTART) ; s = substr(s, RSTART + 2) }
	return out s
}
function defined(v) { return v != "NaN" && v != "nan" && v != "-nan" && v != "" }
function differs(a, b,    m) {
	a += 0; b += 0
	m = (a < 0 ? -a : a) > (b < 0 ? -b : b) ? (a < 0 ? -a : a) : (b < 0 ? -b : b)
	return (a - b > 0.01 * m) || (b - a > 0.01 * m)
}

BEGIN { blk = 0 }
FNR == 1 { file++ }

# the script: one plot element per line ("plot ..." or "     ...")
file == 1 && /index [0-9]+ using/ {
	line = $0
	if (line ~ /notitle/)               # the tags above the bars
		next
	if (line ~ /using 0:/) {            # stacked bars: the segment's own column
		match(line, /index [0-9]+/); k = substr(line, RSTART + 6, RLENGTH - 6) + 0
		u = line
		sub(/\)\/.*/, "", u)           # the sum up to this segment
		n = split(u, parts, /\$/)
		n2 = ++nser
		sk[n2] = k; sc[n2] = parts[n] + 0; sax[n2] = 1; sbar[n2] = 1
		t = line
		sub(/.* title '/, "", t)
		sub(/'(, \\)?[ \t]*$/, "", t)
		stitle[n2] = unquote(t)
		next
	}
	match(line, /index [0-9]+/); k = substr(line, RSTART + 6, RLENGTH - 6) + 0
	rest = substr(line, RSTART + RLENGTH)
	if (!match(rest, /\$[0-9]+/)) next
	# the y column: the first $N from 4 on ($1 is x, 2 and 3 the labels)
	col = 0
	u = rest
	while (!col && match(u, /\$[0-9]+/)) {
		if (substr(u, RSTART + 1, RLENGTH - 1) + 0 >= 4)
			col = substr(u, RSTART + 1, RLENGTH - 1) + 0
		u = substr(u, RSTART + RLENGTH)
	}
	n = ++nser
	sk[n] = k; sc[n] = col
	sax[n] = line ~ /axes x1y2/ ? 2 : 1
	spts[n] = line ~ /with points/
	t = line
	sub(/.* title '/, "", t)
	sub(/'(, \\)?[ \t]*$/, "", t)
	stitle[n] = unquote(t)
	next
}

# the data file: blocks split by two blank lines, comments hold notes
file == 2 && /^# note: / { notes = notes "\n" $0; next }
file == 2 && /^#/ { next }
file == 2 && /^[ \t]*$/ { blank++; next }
file == 2 {
	if (blank >= 2 && seen) { blk++ }
	blank = 0; seen = 1
	line = $0
	gsub(/"[^"]*"/, "S", line)          # the quoted label and tag
	m = split(line, f, /[ \t]+/)
	r = ++nrow[blk]
	X[blk, r] = f[1]
	for (i = 4; i <= m; i++)
		V[blk, r, i] = f[i]
	next
}

END {
	if (!nser) { print "no series read"; exit 1 }
	for (s = 1; s <= nser; s++) {
		k = sk[s]; visible = 0; drawn = 0
		if (sbar[s]) {                  # a bar segment shows when it has height
			for (r = 1; r <= nrow[k]; r++)
				if (defined(V[k, r, sc[s]]) && V[k, r, sc[s]] + 0 > 0)
					visible = 1
			if (!visible && index(notes, "'" stitle[s] "'") == 0)
				fail(sprintf("panel %d bar segment '%s' has no height anywhere", k, stitle[s]))
			continue
		}
		for (r = 1; r <= nrow[k] && !visible; r++) {
			v = V[k, r, sc[s]]
			if (!defined(v)) continue
			drawn = 1
			alone = 1
			for (o = 1; o <= nser && alone; o++) {
				# a series named as lying on others is drawn open (a
				# ring around the point): it does not hide what it covers
				if (o == s || sk[o] != k || sax[o] != sax[s] || index(stitle[o], "(= ")) continue
				if (spts[s]) {
					for (q = 1; q <= nrow[k] && alone; q++) {
						w = V[k, q, sc[o]]
						if (defined(w) && !differs(v, w) && !differs(X[k, r], X[k, q]))
							alone = 0
					}
				} else {
					w = V[k, r, sc[o]]
					if (defined(w) && !differs(v, w))
						alone = 0
				}
			}
			visible = alone
		}
		named = index(stitle[s], "(= ") > 0 || index(notes, "'" stitle[s] "'") > 0
		if (drawn && !visible && !named)
			fail(sprintf("panel %d series '%s' lies on others at every point, unnamed", k, stitle[s]))
	}
	printf "series %d\n", nser
	exit bad ? 1 : 0
}
