package ycsbrunner.binding;

import com.mongodb.ConnectionString;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonInt32;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB 0.17.0 binding for MongoDB on the current sync driver; same semantics as the stock {@code mongodb}
 * binding except for its three batch-insert behaviours ({@code batchsize} > 1), decided one by one:
 * <ul>
 *   <li>batched upserts are a bulk of {@code ReplaceOneModel}s with upsert, unordered like the plain batch's
 *       {@code insertMany}: the stock binding sends {@code UpdateOneModel}s whose update is the replacement
 *       document, which the driver refuses before sending (update documents must hold only $-operators), so
 *       every stock batch upsert returns ERROR and writes nothing;</li>
 *   <li>a failed batch is cleared (its last insert returns ERROR): the stock binding keeps it, its buffer
 *       then never equals {@code batchsize} again, and every later insert returns BATCHED_OK with nothing
 *       written;</li>
 *   <li>the last partial batch of each thread is flushed in {@link #cleanup()} unless
 *       {@code mongodb.flush_last_batch=false}, which drops it as the stock binding does (up to
 *       batchsize - 1 documents per thread, counted as BATCHED_OK): both are defensible, the first for
 *       correctness, the second to compare with published stock figures.</li>
 * </ul>
 * The batch semantics in effect are printed with the driver settings (key {@code batch}). The driver runs with the 3.8
 * driver's defaults unless {@code mongodb.driver_defaults=driver} (see {@link DriverSettings}); the effective
 * settings are printed once on stderr, as {@code ycsb-runner-driver-settings {json}}. No credential is ever
 * printed: the URL is masked and driver messages are scrubbed of the URL's password and secret options.
 *
 * <p>Documents look like {@code {_id: key, field0: BinData(0, ...), ...}}. One MongoClient is shared by all
 * client threads and closed by the last {@link #cleanup()}.
 */
public class MongoDbClient extends DB {

  private static final int MAX_MESSAGE = 600;
  static final String FLUSH_LAST_BATCH = "mongodb.flush_last_batch";
  private static final Object LOCK = new Object();
  private static MongoClient client;
  private static MongoDatabase database;
  private static int references;

  /** URL as configured (may hold a password: never print it unmasked). */
  private String url;
  private int batchSize;
  private boolean upsert;
  /** {@code mongodb.flush_last_batch}: flush a partial insert batch in cleanup (default) or drop it (stock). */
  private boolean flushLastBatch;
  private boolean initialized;
  /** Per-thread insert buffers, one per table. */
  private final Map<String, List<BsonDocument>> pending = new LinkedHashMap<>();

  @Override
  public void init() throws DBException {
    Properties props = getProperties();
    String configured = props.getProperty("mongodb.url", MongoUrl.DEFAULT_URL).trim();
    if (!MongoUrl.hasSupportedScheme(configured)) {
      String masked = MongoUrl.mask(configured);
      System.err.println("ERROR: Invalid URL: '" + masked
          + "'. mongodb.url must start with 'mongodb://' or 'mongodb+srv://'.");
      throw new DBException("Invalid mongodb.url '" + masked + "'");
    }
    String mode;
    int waitQueueMultiple;
    try {
      mode = DriverSettings.mode(props.getProperty(DriverSettings.MODE_PROPERTY));
      url = MongoUrl.withDeprecatedOptions(configured, props);
      waitQueueMultiple = MongoUrl.waitQueueMultiple(props);
    } catch (IllegalArgumentException e) {
      String msg = MongoUrl.scrub(e.getMessage(), configured);
      System.err.println("ERROR: " + msg);
      throw new DBException(msg);
    }
    batchSize = parsePositiveInt(props.getProperty("batchsize", "1"), "batchsize");
    upsert = Boolean.parseBoolean(props.getProperty("mongodb.upsert", "false"));
    flushLastBatch = parseBoolean(props.getProperty(FLUSH_LAST_BATCH, "true"), FLUSH_LAST_BATCH);

    synchronized (LOCK) {
      if (client == null) {
        try {
          ConnectionString cs = new ConnectionString(url);
          MongoClientSettings settings = DriverSettings.build(cs, mode);
          MongoClient created = MongoClients.create(settings);
          client = created;
          database = created.getDatabase(MongoUrl.databaseName(cs.getDatabase()));
          System.out.println("mongo client connection created with " + MongoUrl.mask(url));
          System.err.println(DriverSettings.LINE_PREFIX
              + DriverSettings.describe(settings, mode, waitQueueMultiple, batchSemantics()));
          warnAboutWaitQueue(settings, props, waitQueueMultiple);
        } catch (RuntimeException e) {
          String msg = describe(e);
          System.err.println("ERROR: could not create the MongoDB client for '" + MongoUrl.mask(url) + "': " + msg);
          throw new DBException("Could not create the MongoDB client: " + msg);
        }
      }
      references++;
    }
    initialized = true;
  }

  @Override
  public void cleanup() throws DBException {
    if (!initialized) {
      return;
    }
    initialized = false;
    String failure = null;
    try {
      for (Map.Entry<String, List<BsonDocument>> entry : pending.entrySet()) {
        if (!flushLastBatch) {
          if (!entry.getValue().isEmpty()) {
            System.err.println("dropped the last insert batch of " + entry.getValue().size() + " of table "
                + entry.getKey() + " (" + FLUSH_LAST_BATCH + "=false, as the stock binding)");
          }
          continue;
        }
        if (!entry.getValue().isEmpty() && flush(entry.getKey(), entry.getValue()) != Status.OK) {
          failure = "could not flush the last insert batch of table " + entry.getKey();
        }
      }
      pending.clear();
    } finally {
      synchronized (LOCK) {
        references--;
        if (references == 0 && client != null) {
          client.close();
          client = null;
          database = null;
        }
      }
    }
    if (failure != null) {
      throw new DBException(failure);
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      FindIterable<BsonDocument> found = collection(table).find(byId(key));
      if (fields != null) {
        found = found.projection(Projections.include(new ArrayList<>(fields)));
      }
      BsonDocument doc = found.first();
      if (doc == null) {
        return Status.NOT_FOUND;
      }
      copyBinaryFields(doc, result);
      return Status.OK;
    } catch (RuntimeException e) {
      return fail("read", key, e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try {
      FindIterable<BsonDocument> found = collection(table)
          .find(Filters.gte("_id", startkey))
          .sort(Sorts.ascending("_id"))
          .limit(recordcount);
      if (fields != null) {
        found = found.projection(Projections.include(new ArrayList<>(fields)));
      }
      int count = 0;
      try (MongoCursor<BsonDocument> cursor = found.iterator()) {
        while (cursor.hasNext()) {
          HashMap<String, ByteIterator> row = new HashMap<>();
          copyBinaryFields(cursor.next(), row);
          result.add(row);
          count++;
        }
      }
      if (count == 0) {
        System.err.println("Nothing found in scan for key " + startkey);
        return Status.ERROR;
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return fail("scan", startkey, e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      BsonDocument set = new BsonDocument();
      putValues(set, values);
      UpdateResult res = collection(table).updateOne(byId(key), new BsonDocument("$set", set));
      if (res.wasAcknowledged() && res.getMatchedCount() == 0) {
        System.err.println("Nothing updated for key " + key);
        return Status.NOT_FOUND;
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return fail("update", key, e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    BsonDocument doc = new BsonDocument("_id", new BsonString(key));
    try {
      putValues(doc, values);
      if (batchSize <= 1) {
        MongoCollection<BsonDocument> coll = collection(table);
        if (upsert) {
          coll.replaceOne(byId(key), doc, new ReplaceOptions().upsert(true));
        } else {
          coll.insertOne(doc);
        }
        return Status.OK;
      }
    } catch (RuntimeException e) {
      return fail("insert", key, e);
    }
    List<BsonDocument> buffer = pending.computeIfAbsent(table, t -> new ArrayList<>(batchSize));
    buffer.add(doc);
    if (buffer.size() < batchSize) {
      return Status.BATCHED_OK;
    }
    return flush(table, buffer);
  }

  @Override
  public Status delete(String table, String key) {
    try {
      DeleteResult res = collection(table).deleteOne(byId(key));
      if (res.wasAcknowledged() && res.getDeletedCount() == 0) {
        System.err.println("Nothing deleted for key " + key);
        return Status.NOT_FOUND;
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return fail("delete", key, e);
    }
  }

  /** The batch-insert semantics in effect, for the driver settings line (recorded in the manifest). */
  private BsonDocument batchSemantics() {
    BsonDocument doc = new BsonDocument();
    doc.put("batchsize", new BsonInt32(batchSize));
    doc.put("upsert", BsonBoolean.valueOf(upsert));
    String write;
    if (batchSize <= 1) {
      write = upsert ? "replaceOne upsert" : "insertOne";
    } else {
      write = upsert ? "bulkWrite of ReplaceOneModel upsert, unordered" : "insertMany, unordered";
    }
    doc.put("write", new BsonString(write));
    if (batchSize > 1) {
      doc.put("failed_batch", new BsonString("cleared: the insert that sent it returns ERROR"));
      doc.put("last_batch", new BsonString(flushLastBatch ? "flushed in cleanup" : "dropped, as stock 0.17.0"));
    }
    return doc;
  }

  /** Writes and empties one insert buffer: unordered insertMany, or a bulk of upserting replaces. */
  private Status flush(String table, List<BsonDocument> buffer) {
    String firstKey = buffer.get(0).getString("_id").getValue();
    try {
      MongoCollection<BsonDocument> coll = collection(table);
      if (upsert) {
        List<WriteModel<BsonDocument>> models = new ArrayList<>(buffer.size());
        for (BsonDocument doc : buffer) {
          models.add(new ReplaceOneModel<>(byId(doc.getString("_id").getValue()), doc,
              new ReplaceOptions().upsert(true)));
        }
        coll.bulkWrite(models, new BulkWriteOptions().ordered(false));
      } else {
        coll.insertMany(new ArrayList<>(buffer), new InsertManyOptions().ordered(false));
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return fail("insert batch of " + buffer.size() + " starting at", firstKey, e);
    } finally {
      buffer.clear();
    }
  }

  private static MongoCollection<BsonDocument> collection(String table) {
    MongoDatabase db = database;
    if (db == null) {
      throw new IllegalStateException("MongoDB client is not initialized");
    }
    return db.getCollection(table, BsonDocument.class);
  }

  private static Bson byId(String key) {
    return Filters.eq("_id", key);
  }

  private static void putValues(BsonDocument target, Map<String, ByteIterator> values) {
    for (Map.Entry<String, ByteIterator> entry : values.entrySet()) {
      target.put(entry.getKey(), new BsonBinary(entry.getValue().toArray()));
    }
  }

  private static void copyBinaryFields(BsonDocument doc, Map<String, ByteIterator> result) {
    for (Map.Entry<String, BsonValue> entry : doc.entrySet()) {
      if (entry.getValue().isBinary()) {
        result.put(entry.getKey(), new ByteArrayByteIterator(entry.getValue().asBinary().getData()));
      }
    }
  }

  private Status fail(String op, String key, RuntimeException e) {
    System.err.println("ERROR: MongoDB " + op + " key " + key + " failed: " + describe(e));
    return Status.ERROR;
  }

  /** One line, password-free, at most 600 characters; bulk write errors are summarised. */
  private String describe(RuntimeException e) {
    String text;
    if (e instanceof MongoBulkWriteException) {
      List<BulkWriteError> errors = ((MongoBulkWriteException) e).getWriteErrors();
      text = "MongoBulkWriteException: " + errors.size() + " write error(s)";
      if (!errors.isEmpty()) {
        BulkWriteError first = errors.get(0);
        text += "; first: code " + first.getCode() + " at index " + first.getIndex() + ": " + first.getMessage();
      }
    } else {
      text = e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    Throwable cause = e.getCause();
    if (cause != null && cause != e) {
      text += " (cause: " + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")";
    }
    text = MongoUrl.scrub(text, url);
    return text.length() > MAX_MESSAGE ? text.substring(0, MAX_MESSAGE) + "..." : text;
  }

  /**
   * The 3.8 driver let at most maxPoolSize x waitQueueMultiple threads wait for a connection and failed the
   * others' operations; driver 5.x has no such limit, so say so when the thread count goes beyond it.
   */
  private static void warnAboutWaitQueue(MongoClientSettings settings, Properties props, int multiple) {
    int pool = settings.getConnectionPoolSettings().getMaxSize();
    long threads;
    try {
      threads = Long.parseLong(props.getProperty("threadcount", "1").trim());
    } catch (NumberFormatException e) {
      return;
    }
    long limit = (long) pool * multiple;
    if (pool > 0 && threads > pool + limit) {
      System.err.println("WARNING: " + threads + " threads exceed maxPoolSize " + pool + " plus the 3.8 driver's "
          + "wait queue of " + limit + " (waitQueueMultiple " + multiple + "): the stock binding would fail the "
          + "excess operations (MongoWaitQueueFullException); this binding lets them wait for a connection");
    }
  }

  private static int parsePositiveInt(String value, String name) throws DBException {
    try {
      int parsed = Integer.parseInt(value.trim());
      if (parsed < 1) {
        throw new NumberFormatException("must be >= 1");
      }
      return parsed;
    } catch (NumberFormatException e) {
      System.err.println("ERROR: property " + name + " must be a positive integer, got '" + value + "'");
      throw new DBException("Invalid " + name + " '" + value + "'");
    }
  }

  private static boolean parseBoolean(String value, String name) throws DBException {
    String v = value.trim().toLowerCase(java.util.Locale.ROOT);
    if (v.equals("true") || v.equals("false")) {
      return v.equals("true");
    }
    System.err.println("ERROR: property " + name + " must be true or false, got '" + value + "'");
    throw new DBException("Invalid " + name + " '" + value + "'");
  }
}
