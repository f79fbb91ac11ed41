package ycsbrunner.binding;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Properties;

/**
 * Pure helpers around the {@code mongodb.url} property: validation, password masking, database choice and the
 * deprecated YCSB options that are folded into the URL.
 */
public final class MongoUrl {

  /** URL used when {@code mongodb.url} is not set (same default as the stock YCSB binding). */
  public static final String DEFAULT_URL = "mongodb://localhost:27017/ycsb?w=1";

  /** Database used when the URL names none, or names {@code admin}. */
  public static final String DEFAULT_DATABASE = "ycsb";

  private MongoUrl() {
  }

  /** True when the URL uses a scheme the MongoDB driver understands. */
  public static boolean hasSupportedScheme(String url) {
    return url.startsWith("mongodb://") || url.startsWith("mongodb+srv://");
  }

  /** Where the password of {@code scheme://user:password@} lies: {colon, at}, or null when there is none. */
  private static int[] passwordSpan(String url) {
    if (url == null) {
      return null;
    }
    int schemeEnd = url.indexOf("://");
    int start = schemeEnd < 0 ? 0 : schemeEnd + 3;
    int at = url.lastIndexOf('@');
    if (at < start) {
      return null;
    }
    int colon = url.indexOf(':', start);
    if (colon < 0 || colon > at) {
      return null;
    }
    return new int[] {colon, at};
  }

  /** The URL with the password of {@code user:password@} replaced by {@code ***}; other text is kept. */
  public static String mask(String url) {
    int[] span = passwordSpan(url);
    return span == null ? url : url.substring(0, span[0] + 1) + "***" + url.substring(span[1]);
  }

  /** The raw password in the URL, or null when there is none (used to scrub driver messages). */
  public static String password(String url) {
    int[] span = passwordSpan(url);
    return span == null || span[0] >= span[1] - 1 ? null : url.substring(span[0] + 1, span[1]);
  }

  /** Replaces every occurrence of the URL's password in {@code text} by {@code ***} and flattens it to one line. */
  public static String scrub(String text, String url) {
    if (text == null) {
      return "";
    }
    String out = text;
    String secret = password(url);
    if (secret != null && !secret.isEmpty()) {
      out = out.replace(secret, "***");
      try {
        String decoded = URLDecoder.decode(secret, StandardCharsets.UTF_8);
        if (!decoded.isEmpty()) {
          out = out.replace(decoded, "***");
        }
      } catch (IllegalArgumentException e) {
        // not valid percent-encoding: the raw form was already replaced
      }
    }
    return out.replace('\r', ' ').replace('\n', ' ');
  }

  /** Database to use: the driver-parsed path, or {@code ycsb} when it is empty or {@code admin}. */
  public static String databaseName(String parsedDatabase) {
    if (parsedDatabase == null || parsedDatabase.isEmpty() || "admin".equals(parsedDatabase)) {
      return DEFAULT_DATABASE;
    }
    return parsedDatabase;
  }

  /**
   * Folds the deprecated properties {@code mongodb.writeConcern}, {@code mongodb.readPreference} and
   * {@code mongodb.maxconnections} into the URL, unless the URL already sets the option.
   */
  public static String withDeprecatedOptions(String url, Properties props) {
    String out = url;
    String wc = props.getProperty("mongodb.writeConcern");
    if (wc != null && !out.contains("w=") && !out.contains("journal=")) {
      String opt = writeConcernOption(wc.trim().toLowerCase(Locale.ROOT));
      if (opt != null) {
        out = addOption(out, opt);
      }
    }
    String rp = props.getProperty("mongodb.readPreference");
    if (rp != null && !out.contains("readPreference=")) {
      String mode = readPreferenceMode(rp.trim().toLowerCase(Locale.ROOT));
      if (mode != null) {
        out = addOption(out, "readPreference=" + mode);
      }
    }
    String max = props.getProperty("mongodb.maxconnections");
    if (max != null && !out.contains("maxPoolSize=")) {
      out = addOption(out, "maxPoolSize=" + max.trim());
    }
    return out;
  }

  private static String writeConcernOption(String value) {
    switch (value) {
      case "errors_ignored":
      case "unacknowledged":
        return "w=0";
      case "acknowledged":
        return "w=1";
      case "journaled":
        return "journal=true";
      case "replica_acknowledged":
        return "w=2";
      case "majority":
        return "w=majority";
      default:
        return null;
    }
  }

  private static String readPreferenceMode(String value) {
    switch (value) {
      case "primary":
        return "primary";
      case "primary_preferred":
        return "primaryPreferred";
      case "secondary":
        return "secondary";
      case "secondary_preferred":
        return "secondaryPreferred";
      case "nearest":
        return "nearest";
      default:
        return null;
    }
  }

  /** Appends {@code option} to the query part of the URL, adding {@code /?} or {@code ?} as needed. */
  static String addOption(String url, String option) {
    if (url.contains("?")) {
      return url.endsWith("?") || url.endsWith("&") ? url + option : url + "&" + option;
    }
    int schemeEnd = url.indexOf("://");
    int hostStart = schemeEnd < 0 ? 0 : schemeEnd + 3;
    boolean hasPath = url.indexOf('/', hostStart) >= 0;
    return url + (hasPath ? "?" : "/?") + option;
  }
}
