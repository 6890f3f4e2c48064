#!/bin/sh
# check_citations.sh - every documentation citation in the tree resolves inside the repository:
# the cited file exists and, for a cited section, a heading with that number exists in it
# ("## 6. ..." or "### 6.5 ..."). Short forms used in comments, and the files they mean:
#   rm.md §N, hw/rm.md §N, docs/hw/rm.md §N           -> docs/hw/rm.md
#   nvgpu.md §N, hw/nvgpu.md §N, docs/hw/nvgpu.md §N  -> docs/hw/nvgpu.md
#   anchors.md §N, docs/perf/anchors.md §N             -> docs/perf/anchors.md
#   STYLE N.M, STYLE.md N.M, STYLE §N.M                -> docs/style.md
#   ARCHITECTURE §N, ARCHITECTURE.md §N                -> docs/architecture.md
#   docs/<path>.md §N                                  -> that file
# Lists "§4.2-4.4" and "§8.3, §6.5" check every number. A plain `docs/<path>.md` mention must
# name an existing file ("ggml docs/gguf.md" is ggml's, not ours). Prints "citations: N passed, N failed" (one check per distinct
# citation) and the file:line of each one that does not resolve.
cd "$(dirname "$0")/.." || exit 1
files=$(find src include tools tests bench docs -type f \( -name '*.[ch]' -o -name '*.cu' -o -name '*.md' \
    -o -name '*.sh' -o -name '*.inc' \) | sort)
files="$files README.md Makefile"
tmp=$(mktemp)
# file:line:citation, one per line (grep -o keeps every match on a line).
# shellcheck disable=SC2086
grep -HnoE '(ggml )?((docs/)?(hw/|perf/)?[A-Za-z0-9_./-]*\.md|STYLE(\.md)?|ARCHITECTURE(\.md)?)[`"'"'"' (]*(§ ?)?[0-9]+(\.[0-9]+)*((-| to |, ?§ ?|/§ ?)[0-9]+(\.[0-9]+)*)*' \
    $files 2>/dev/null > "$tmp"
# plain doc paths (no section)
# shellcheck disable=SC2086
grep -HnoE '(ggml )?docs/[A-Za-z0-9_/-]+\.md' $files 2>/dev/null | sed 's/$/ §/' >> "$tmp"
awk -F: '
function resolve(name,    n) {
    n = name
    sub(/^docs\//, "", n)
    if (n == "rm.md" || n == "hw/rm.md") return "docs/hw/rm.md"
    if (n == "nvgpu.md" || n == "hw/nvgpu.md") return "docs/hw/nvgpu.md"
    if (n == "anchors.md" || n == "perf/anchors.md") return "docs/perf/anchors.md"
    if (n == "STYLE" || n == "STYLE.md") return "docs/style.md"
    if (n == "ARCHITECTURE" || n == "ARCHITECTURE.md") return "docs/architecture.md"
    if (name ~ /^docs\//) return name
    return ""            # another .md (e.g. a README beside the code): not a doc citation
}
function has_heading(doc, sec,    line, ok, pat) {
    key = doc SUBSEP sec
    if (key in cache) return cache[key]
    ok = 0
    pat = sec
    gsub(/\./, "\\.", pat)
    while ((getline line < doc) > 0)
        if (line ~ ("^#+ +(§ ?)?" pat "([.:]? |\\.?$)")) { ok = 1; break }
    close(doc)
    cache[key] = ok
    return ok
}
{
    where = $1 ":" $2
    cit = $0
    sub(/^[^:]*:[^:]*:/, "", cit)
    if (cit ~ /^ggml /) next     # the GGUF specification in the ggml repository, not ours
    name = cit
    sub(/[`"'"'"' (§].*$/, "", name)
    sub(/ *[0-9].*$/, "", name)
    if (name == "") next
    doc = resolve(name)
    if (doc == "") next
    rest = substr(cit, length(name) + 1)
    if (name ~ /^(STYLE|ARCHITECTURE)/ && rest !~ /[0-9]/) next
    n = split(rest, parts, /(-| to |, ?§ ?|\/§ ?)/)
    id = doc
    for (i = 1; i <= n; i++) {
        sec = parts[i]
        gsub(/[^0-9.]/, "", sec)
        sub(/\.$/, "", sec)
        if (sec != "") id = id " §" sec
    }
    if (id in seen) next
    seen[id] = 1
    ok = (getline line < doc) >= 0
    close(doc)
    why = ""
    if (!ok) why = "no file " doc
    for (i = 1; ok && i <= n; i++) {
        sec = parts[i]
        gsub(/[^0-9.]/, "", sec)
        sub(/\.$/, "", sec)
        if (sec != "" && !has_heading(doc, sec)) { ok = 0; why = "no heading " sec " in " doc }
    }
    if (ok) pass++
    else { fail++; print "  FAIL " where ": " cit " (" why ")" }
}
END {
    printf "citations: %d passed, %d failed\n", pass, fail
    exit fail > 0
}' "$tmp"
rc=$?
rm -f "$tmp"
exit $rc
