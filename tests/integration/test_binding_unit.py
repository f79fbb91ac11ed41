"""ycsb-runner's own MongoDB binding (java/): URL helpers (unit) and operation semantics (integration).

The unit part compiles ``MongoUrl.java`` (JDK only) together with a tiny driver program; the integration part
runs the built binding against the embedded server, both through a Java harness and through real YCSB.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bson import decode_all
from bson.raw_bson import RawBSONDocument

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "java" / "src" / "main" / "java" / "ycsbrunner" / "binding"

URL_CHECK = r"""
import java.io.*;
import java.util.*;
import ycsbrunner.binding.MongoUrl;

public class UrlCheck {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    String line;
    while ((line = in.readLine()) != null) {
      String[] a = line.split("\t", -1);
      String out;
      switch (a[0]) {
        case "mask": out = MongoUrl.mask(a[1]); break;
        case "password": out = String.valueOf(MongoUrl.password(a[1])); break;
        case "scrub": out = MongoUrl.scrub(a[1].replace("\\n", "\n"), a[2]); break;
        case "db": out = MongoUrl.databaseName(a[1].equals("<null>") ? null : a[1]); break;
        case "scheme": out = String.valueOf(MongoUrl.hasSupportedScheme(a[1])); break;
        case "has": out = String.valueOf(MongoUrl.hasOption(a[1], a[2])); break;
        case "deprecated": {
          Properties p = new Properties();
          for (String kv : a[2].split(";")) {
            int eq = kv.indexOf('=');
            if (eq > 0) p.setProperty(kv.substring(0, eq), kv.substring(eq + 1));
          }
          try {
            out = MongoUrl.withDeprecatedOptions(a[1], p);
          } catch (IllegalArgumentException e) {
            out = "refused: " + e.getMessage();
          }
          break;
        }
        default: throw new IllegalArgumentException(a[0]);
      }
      System.out.println(out);
    }
  }
}
"""

# (function, arguments..., expected)
URL_CASES: list[tuple[str, ...]] = [
    ("mask", "mongodb://u:secretpw@h:27017/ycsb?w=1", "mongodb://u:***@h:27017/ycsb?w=1"),
    ("mask", "mongodb+srv://u:p%40ss@c.example.net/db", "mongodb+srv://u:***@c.example.net/db"),
    ("mask", "mongodb://a:b@h1:1,h2:2/ycsb", "mongodb://a:***@h1:1,h2:2/ycsb"),
    ("mask", "mongodb://h:27017/ycsb", "mongodb://h:27017/ycsb"),
    ("mask", "mongodb://u@h:27017/ycsb", "mongodb://u@h:27017/ycsb"),
    ("mask", "http://u:pw@x", "http://u:***@x"),
    ("mask", "u:pw@x", "u:***@x"),
    (
        "mask",
        "mongodb://u:pw@h/db?authMechanismProperties=AWS_SESSION_TOKEN:t0k&appName=a@b&myToken=z",
        "mongodb://u:***@h/db?authMechanismProperties=***&appName=a@b&myToken=***",
    ),
    (
        "mask",
        "mongodb://h/db?tlsCertificateKeyFilePassword=k3y&w=1",
        "mongodb://h/db?tlsCertificateKeyFilePassword=***&w=1",
    ),
    ("mask", "mongodb://u:p@ss:w/rd%@127.0.0.1:1/ycsb", "mongodb://u:***@127.0.0.1:1/ycsb"),
    ("password", "mongodb://u:secretpw@h/ycsb", "secretpw"),
    ("password", "mongodb://u:@h/ycsb", "null"),
    ("password", "mongodb://h:27017/ycsb", "null"),
    ("scrub", "auth failed for secretpw\\nretry", "mongodb://u:secretpw@h/x", "auth failed for *** retry"),
    ("scrub", "bad p@ss here", "mongodb://u:p%40ss@h/x", "bad *** here"),
    ("scrub", "nothing secret", "mongodb://h/x", "nothing secret"),
    (
        "scrub",
        "bad 'S:t0k' and k%3D",
        "mongodb://h/x?authMechanismProperties=S:t0k&fooSecret=k%253D",
        "bad '***' and ***",
    ),
    ("db", "<null>", "ycsb"),
    ("db", "", "ycsb"),
    ("db", "admin", "ycsb"),
    ("db", "bench", "bench"),
    ("scheme", "mongodb://h", "true"),
    ("scheme", "mongodb+srv://c.example.net", "true"),
    ("scheme", "http://x", "false"),
    ("scheme", "localhost:27017", "false"),
    ("deprecated", "mongodb://h/ycsb", "mongodb.writeConcern=majority", "mongodb://h/ycsb?w=majority"),
    (
        "deprecated",
        "mongodb://h",
        "mongodb.readPreference=secondary_preferred",
        "mongodb://h/?readPreference=secondaryPreferred",
    ),
    (
        "deprecated",
        "mongodb://h/ycsb?w=1",
        "mongodb.writeConcern=majority;mongodb.maxconnections=8",
        "mongodb://h/ycsb?w=1&maxPoolSize=8",
    ),
    ("deprecated", "mongodb://h/ycsb", "mongodb.writeConcern=journaled", "mongodb://h/ycsb?journal=true"),
    # as in the stock binding, journaled adds journal=true next to a w= already in the URL
    (
        "deprecated",
        "mongodb://h/ycsb?w=1",
        "mongodb.writeConcern=journaled",
        "mongodb://h/ycsb?w=1&journal=true",
    ),
    (
        "deprecated",
        "mongodb://h/ycsb?journal=false",
        "mongodb.writeConcern=journaled",
        "mongodb://h/ycsb?journal=false",
    ),
    ("deprecated", "mongodb://h/ycsb?W=2", "mongodb.writeConcern=majority", "mongodb://h/ycsb?W=2"),
    (
        "deprecated",
        "mongodb://h/ycsb?maxpoolsize=3",
        "mongodb.maxconnections=8",
        "mongodb://h/ycsb?maxpoolsize=3",
    ),
    (
        "deprecated",
        "mongodb://h/ycsb",
        "mongodb.writeConcern=bogus",
        "refused: mongodb.writeConcern='bogus' is not one of unacknowledged, errors_ignored, acknowledged, "
        "journaled, replica_acknowledged, majority (or set w= / journal= in mongodb.url instead)",
    ),
    (
        "deprecated",
        "mongodb://h/ycsb",
        "mongodb.maxconnections=0",
        "refused: mongodb.maxconnections='0' must be a positive integer",
    ),
    ("has", "mongodb://u:p@h/db?appName=x&retryWrites=true", "retrywrites", "true"),
    ("has", "mongodb://u:p?w=1@h/db", "w", "false"),
    ("mask", "mongodb://u:p?w=1@h/db?w=1", "mongodb://u:***@h/db?w=1"),
    ("has", "mongodb://h/db", "w", "false"),
    ("deprecated", "mongodb://h/ycsb", "", "mongodb://h/ycsb"),
]


def test_url_helpers(tmp_path: Path) -> None:
    javac, java = shutil.which("javac"), shutil.which("java")
    if not javac or not java:
        pytest.skip("needs a JDK (javac)")
    (tmp_path / "UrlCheck.java").write_text(URL_CHECK)
    sources = [str(SRC / "MongoUrl.java"), str(tmp_path / "UrlCheck.java")]
    subprocess.run(
        [javac, "-d", str(tmp_path / "cls"), *sources], check=True, capture_output=True, timeout=120
    )
    stdin = "".join("\t".join(case[:-1]) + "\n" for case in URL_CASES)
    proc = subprocess.run(
        [java, "-cp", str(tmp_path / "cls"), "UrlCheck"],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    got = proc.stdout.splitlines()
    assert len(got) == len(URL_CASES)
    for case, out in zip(URL_CASES, got, strict=True):
        assert out == case[-1], case


HARNESS = r"""
import java.util.*;
import site.ycsb.*;
import ycsbrunner.binding.MongoDbClient;

public class Harness {
  static MongoDbClient open(String url, String... kv) throws DBException {
    MongoDbClient db = new MongoDbClient();
    Properties p = new Properties();
    p.setProperty("mongodb.url", url);
    for (int i = 0; i < kv.length; i += 2) p.setProperty(kv[i], kv[i + 1]);
    db.setProperties(p);
    db.init();
    return db;
  }
  static Map<String, ByteIterator> vals(String... kv) {
    Map<String, ByteIterator> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], new StringByteIterator(kv[i + 1]));
    return m;
  }
  static void show(String what, Object v) {
    System.out.println(what + "=" + (v instanceof Status ? ((Status) v).getName() : v));
  }

  public static void main(String[] a) throws Exception {
    String url = a[0], t = "harness";
    MongoDbClient db = open(url);
    show("insert1", db.insert(t, "k1", vals("f0", "aa", "f1", "bb")));
    show("insert2", db.insert(t, "k2", vals("f0", "cc", "f1", "dd")));
    show("insertDup", db.insert(t, "k1", vals("f0", "zz")));
    Map<String, ByteIterator> r = new HashMap<>();
    show("readAll", db.read(t, "k1", null, r));
    show("readAllFields", new TreeMap<>(StringByteIterator.getStringMap(r)));
    r.clear();
    show("readOne", db.read(t, "k2", new HashSet<>(List.of("f1")), r));
    show("readOneFields", new TreeMap<>(StringByteIterator.getStringMap(r)));
    show("readMissing", db.read(t, "nope", null, new HashMap<>()));
    show("update", db.update(t, "k1", vals("f1", "BB")));
    r.clear();
    db.read(t, "k1", null, r);
    show("afterUpdate", new TreeMap<>(StringByteIterator.getStringMap(r)));
    show("updateMissing", db.update(t, "nope", vals("f1", "x")));
    Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
    show("scan", db.scan(t, "k1", 5, null, rows));
    List<String> f0 = new ArrayList<>();
    for (HashMap<String, ByteIterator> row : rows) f0.add(row.get("f0").toString());
    show("scanF0", f0);
    rows.clear();
    show("scanEmpty", db.scan(t, "z", 5, null, rows));
    show("delete", db.delete(t, "k2"));
    show("deleteMissing", db.delete(t, "k2"));
    db.cleanup();

    MongoDbClient up = open(url, "mongodb.upsert", "true");
    show("upsertExisting", up.insert(t, "k1", vals("f0", "UP")));
    up.cleanup();

    MongoDbClient batch = open(url, "batchsize", "3", "mongodb.upsert", "true");
    for (int i = 0; i < 5; i++) show("batchUpsert" + i, batch.insert(t, "b" + i, vals("f0", "v" + i)));
    batch.cleanup();
    try {
      open("http://u:secretpw@x/ycsb");
      show("badUrl", "accepted");
    } catch (DBException e) {
      show("badUrl", "DBException");
    }
  }
}
"""


def _own_binding(ycsb) -> None:
    if ycsb.binding_class != "ycsbrunner.binding.MongoDbClient":
        pytest.skip("YCSB_HOME selects the stock binding")


@pytest.mark.integration
def test_operation_semantics(ycsb, java_path: str, mongo, mongo_url: str, tmp_path: Path) -> None:
    _own_binding(ycsb)
    mongo.ycsb.harness.drop()
    (tmp_path / "Harness.java").write_text(HARNESS)
    argv = [java_path, "-cp", ":".join(ycsb.classpath), str(tmp_path / "Harness.java"), mongo_url]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr
    got = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line and "://" not in line)
    assert got["insert1"] == got["insert2"] == "OK"
    assert got["insertDup"] == "ERROR"
    assert got["readAll"] == "OK" and got["readAllFields"] == "{f0=aa, f1=bb}"
    assert got["readOne"] == "OK" and got["readOneFields"] == "{f1=dd}"
    assert got["readMissing"] == "NOT_FOUND"
    assert got["update"] == "OK" and got["afterUpdate"] == "{f0=aa, f1=BB}"
    assert got["updateMissing"] == "NOT_FOUND"
    assert got["scan"] == "OK" and got["scanF0"] == "[aa, cc]"
    assert got["scanEmpty"] == "ERROR"
    assert got["delete"] == "OK" and got["deleteMissing"] == "NOT_FOUND"
    assert got["upsertExisting"] == "OK"
    assert [got[f"batchUpsert{i}"] for i in range(5)] == [
        "BATCHED_OK",
        "BATCHED_OK",
        "OK",
        "BATCHED_OK",
        "BATCHED_OK",
    ]
    assert got["badUrl"] == "DBException"
    assert "ERROR: Invalid URL: 'http://u:***@x/ycsb'" in proc.stderr
    assert "secretpw" not in proc.stdout + proc.stderr
    docs = {d["_id"]: d for d in mongo.ycsb.harness.find()}
    assert sorted(docs) == ["b0", "b1", "b2", "b3", "b4", "k1"]  # the partial batch (b3, b4) was flushed
    assert docs["k1"]["f0"] == b"UP" and "f1" not in docs["k1"]  # upsert replaces the whole document
    mongo.ycsb.harness.drop()


@pytest.mark.integration
def test_ycsb_load_flushes_partial_batches_and_stores_binary(ycsb, run_ycsb, mongo) -> None:
    _own_binding(ycsb)
    mongo.ycsb.usertable.drop()
    rc, out, err = run_ycsb("load", {"recordcount": 100, "batchsize": 7}, threads=3)
    assert rc == 0, err
    returns = {m[0]: int(m[1]) for m in re.findall(r"^\[INSERT\], Return=(\w+), (\d+)$", out, re.M)}
    assert set(returns) == {"OK", "BATCHED_OK"} and sum(returns.values()) == 100
    raw = mongo.ycsb.get_collection("usertable").with_options(
        codec_options=mongo.ycsb.usertable.codec_options.with_options(document_class=RawBSONDocument)
    )
    docs = [decode_all(d.raw)[0] for d in raw.find()]
    assert len(docs) == 100
    for doc in docs:
        assert re.fullmatch(r"user\d+", doc["_id"])
        assert sorted(k for k in doc if k != "_id") == [f"field{i}" for i in range(10)]
        # pymongo decodes only BSON binary subtype 0 to plain bytes
        assert all(type(doc[f"field{i}"]) is bytes and len(doc[f"field{i}"]) == 100 for i in range(10))
    mongo.ycsb.usertable.drop()
