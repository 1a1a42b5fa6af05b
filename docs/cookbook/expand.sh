#!/usr/bin/env bash
# Before executing an edit the model proposed, expand the references in its
# arguments: the model writes "lines 1-3 of toolu_02, new text, lines
# 49998-50000 of toolu_02" instead of generating the unchanged lines again.
# All or nothing: if any reference fails, nothing is expanded (exit 6) and
# stderr names each failing reference, which is what the model should see.
set -euo pipefail

cat >edit.json <<'JSON'
{"path": "numbers.txt",
 "content": {"$concat": [{"$ref": "toolu_02", "lines": [1, 3]},
                         "...\n",
                         {"$ref": "toolu_02", "lines": [49998, 50000]}]}}
JSON

if args=$(retval expand --summary edit.summary.json edit.json 2>expand.err); then
	jq -j .content <<<"$args" >numbers.txt # the harness executes the edit
	cat numbers.txt
	cat edit.summary.json # what a later briefing keeps instead of the bodies
else
	echo "edit refused (exit $?):"
	cat expand.err
fi
