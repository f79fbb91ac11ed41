package ycsbrunner.binding;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCompressor;
import com.mongodb.ReadConcern;
import com.mongodb.WriteConcern;
import com.mongodb.connection.ConnectionPoolSettings;
import com.mongodb.internal.build.MongoDriverVersion;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * The MongoClientSettings the binding runs with, and their one-line report.
 *
 * <p>{@code mongodb.driver_defaults=stock} (the default) gives the defaults of the Java driver 3.8 that YCSB
 * 0.17.0's stock binding ships, wherever the URL is silent: retryable writes and reads off, and connection
 * establishment not throttled (maxConnecting = the pool size; 3.8 had no such limit). Pool size (100), wait time
 * (2 min) and idle/life times are the same in both drivers. {@code driver} keeps the 5.x driver's defaults
 * (retryWrites/retryReads on, maxConnecting 2). Options in the URL always win.
 */
public final class DriverSettings {

  /** Prefix of the settings line on stderr; the runner parses the JSON after it. */
  public static final String LINE_PREFIX = "ycsb-runner-driver-settings ";

  /** The YCSB property that selects the defaults. */
  public static final String MODE_PROPERTY = "mongodb.driver_defaults";

  private DriverSettings() {
  }

  /** {@code stock} or {@code driver}, from the property (default {@code stock}). */
  public static String mode(String value) {
    String mode = value == null ? "stock" : value.trim().toLowerCase(Locale.ROOT);
    if (!mode.equals("stock") && !mode.equals("driver")) {
      throw new IllegalArgumentException(MODE_PROPERTY + "='" + value.trim() + "' must be stock or driver");
    }
    return mode;
  }

  /** The settings for {@code cs}: the URL's options, and the stock defaults where it is silent and asked for. */
  public static MongoClientSettings build(ConnectionString cs, String mode) {
    MongoClientSettings.Builder builder = MongoClientSettings.builder().applyConnectionString(cs);
    if (mode.equals("stock")) {
      if (cs.getRetryWritesValue() == null) {
        builder.retryWrites(false);
      }
      if (cs.getRetryReads() == null) {
        builder.retryReads(false);
      }
      if (cs.getMaxConnecting() == null) {
        builder.applyToConnectionPoolSettings(pool -> {
          int max = pool.build().getMaxSize();
          pool.maxConnecting(max > 0 ? max : Integer.MAX_VALUE);
        });
      }
    }
    return builder.build();
  }

  /**
   * The effective settings as one JSON object (no host, user or credential in it): write concern, read
   * preference and concern, retryable writes/reads, pool limits, compressors, TLS.
   */
  public static String describe(MongoClientSettings settings, String mode, int waitQueueMultiple) {
    return describe(settings, mode, waitQueueMultiple, null);
  }

  /** As above, plus the binding's batch-insert semantics under {@code batch} (when given). */
  public static String describe(MongoClientSettings settings, String mode, int waitQueueMultiple,
      BsonDocument batch) {
    BsonDocument doc = new BsonDocument();
    doc.put("driver_defaults", new BsonString(mode));
    doc.put("driver_version", new BsonString(MongoDriverVersion.VERSION));
    WriteConcern wc = settings.getWriteConcern();
    BsonDocument wcDoc = new BsonDocument();
    Object w = wc.getWObject();
    wcDoc.put("w", w == null ? BsonNull.VALUE : w instanceof Integer ? new BsonInt32((Integer) w)
        : new BsonString(w.toString()));
    wcDoc.put("journal", wc.getJournal() == null ? BsonNull.VALUE : BsonBoolean.valueOf(wc.getJournal()));
    Integer wtimeout = wc.getWTimeout(TimeUnit.MILLISECONDS);
    wcDoc.put("wtimeout_ms", wtimeout == null ? BsonNull.VALUE : new BsonInt32(wtimeout));
    doc.put("write_concern", wcDoc);
    doc.put("read_preference", new BsonString(settings.getReadPreference().getName()));
    ReadConcern rc = settings.getReadConcern();
    doc.put("read_concern", rc.getLevel() == null ? BsonNull.VALUE : new BsonString(rc.getLevel().getValue()));
    doc.put("retry_writes", BsonBoolean.valueOf(settings.getRetryWrites()));
    doc.put("retry_reads", BsonBoolean.valueOf(settings.getRetryReads()));
    ConnectionPoolSettings pool = settings.getConnectionPoolSettings();
    doc.put("max_pool_size", new BsonInt32(pool.getMaxSize()));
    doc.put("min_pool_size", new BsonInt32(pool.getMinSize()));
    doc.put("max_connecting", new BsonInt32(pool.getMaxConnecting()));
    doc.put("max_wait_time_ms", new BsonInt64(pool.getMaxWaitTime(TimeUnit.MILLISECONDS)));
    doc.put("stock_wait_queue_limit", new BsonInt64((long) pool.getMaxSize() * waitQueueMultiple));
    BsonArray compressors = new BsonArray();
    for (MongoCompressor c : settings.getCompressorList()) {
      compressors.add(new BsonString(c.getName()));
    }
    doc.put("compressors", compressors);
    doc.put("tls", BsonBoolean.valueOf(settings.getSslSettings().isEnabled()));
    if (batch != null) {
      doc.put("batch", batch);
    }
    return doc.toJson(JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).indent(false).build());
  }
}
