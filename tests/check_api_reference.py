# SPDX-License-Identifier: BSD-3-Clause
"""tests/check_api_reference.py DOXYGEN DOXYFILE_IN SOURCE LIBRARY...: the C
API reference builds (doxygen over include/, as make docs), and every
function the libraries export (librfx, and librfx_dist when built) is in it. Prints the count of exported functions whose
declaration has no comment of its own (those documented by the comment of
their group). Exit 77 (skipped) without doxygen."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def main():
    doxygen, doxyfile_in, source = sys.argv[1:4]
    libraries = sys.argv[4:]
    if not shutil.which(doxygen):
        print("doxygen not found: skipped")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        text = open(doxyfile_in).read()
        text = text.replace("@PROJECT_SOURCE_DIR@", source).replace("@RFX_DOCS_DIR@", tmp)
        text = text.replace("@PROJECT_VERSION@", "test")
        with open(os.path.join(tmp, "Doxyfile"), "w") as f:
            f.write(text)
        subprocess.run([doxygen, os.path.join(tmp, "Doxyfile")], check=True, cwd=tmp,
                       stdout=subprocess.DEVNULL)
        doc = {}
        for path in glob.glob(os.path.join(tmp, "xml", "*_8h.xml")):
            for m in ET.parse(path).iter("memberdef"):
                if m.get("kind") != "function":
                    continue
                text = "".join(m.find("briefdescription").itertext())
                text += "".join(m.find("detaileddescription").itertext())
                name = m.findtext("name")
                doc[name] = doc.get(name, "") + text.strip()
        if not os.path.exists(os.path.join(tmp, "html", "index.html")):
            print("FAIL: no html/index.html")
            return 1
    exported = set()
    for library in libraries:
        nm = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                            capture_output=True, text=True).stdout.split()
        exported |= {s for s in nm if s.startswith("rfx_")}
    exported = sorted(exported)
    missing = [f for f in exported if f not in doc]
    alone = [f for f in exported if f in doc and not doc[f]]
    for f in missing:
        print("FAIL: %s is exported but not in the reference (no declaration in include/)" % f)
    print("%d exported functions in the reference, %d documented by their own comment, "
          "%d by their group's" % (len(exported) - len(missing), len(exported) - len(missing)
                                   - len(alone), len(alone)))
    print("%d passed, %d failed" % (len(exported) - len(missing), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
