package ycsbrunner.binding;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Pure helpers around the {@code mongodb.url} property: validation, credential masking, database choice and
 * the deprecated YCSB options that are folded into the URL.
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

  /**
   * Where the password of {@code scheme://user:password@} lies: {colon, at}, or null when there is none. The
   * userinfo ends at the last {@code @} before the first {@code ?}, so an unencoded {@code @} or {@code /} in
   * the password is still covered and an {@code @} in an option value is not taken for it; when no {@code @}
   * comes before the first {@code ?} (an unencoded {@code ?} in the password), at the last {@code @}.
   */
  private static int[] passwordSpan(String url) {
    if (url == null) {
      return null;
    }
    int schemeEnd = url.indexOf("://");
    int start = schemeEnd < 0 ? 0 : schemeEnd + 3;
    int query = url.indexOf('?', start);
    int at = query < 0 ? -1 : url.lastIndexOf('@', query);
    if (at < start) {
      at = url.lastIndexOf('@');
    }
    if (at < start) {
      return null;
    }
    int colon = url.indexOf(':', start);
    if (colon < 0 || colon > at) {
      return null;
    }
    return new int[] {colon, at};
  }

  /**
   * The URL with the password of {@code user:password@} and the value of every secret option (see
   * {@link #isSecretOption}) replaced by {@code ***}; other text is kept.
   */
  public static String mask(String url) {
    if (url == null) {
      return null;
    }
    int[] span = passwordSpan(url);
    String out = span == null ? url : url.substring(0, span[0] + 1) + "***" + url.substring(span[1]);
    int query = out.indexOf('?', span == null ? 0 : span[0] + 4);
    if (query < 0) {
      return out;
    }
    StringBuilder masked = new StringBuilder(out.substring(0, query + 1));
    String[] items = out.substring(query + 1).split("&", -1);
    for (int i = 0; i < items.length; i++) {
      int eq = items[i].indexOf('=');
      if (i > 0) {
        masked.append('&');
      }
      if (eq > 0 && isSecretOption(items[i].substring(0, eq)) && eq < items[i].length() - 1) {
        masked.append(items[i], 0, eq + 1).append("***");
      } else {
        masked.append(items[i]);
      }
    }
    return masked.toString();
  }

  /**
   * True for a URL option whose value is a credential: {@code authMechanismProperties} (may carry an AWS
   * session token), the TLS key password options, and any option whose name mentions password, secret or token.
   */
  public static boolean isSecretOption(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return n.equals("authmechanismproperties") || n.contains("password") || n.contains("secret")
        || n.contains("token") || n.equals("tlscertificatekeyfilepassword");
  }

  /** The raw password in the URL, or null when there is none (used to scrub driver messages). */
  public static String password(String url) {
    int[] span = passwordSpan(url);
    return span == null || span[0] >= span[1] - 1 ? null : url.substring(span[0] + 1, span[1]);
  }

  /** Every credential in the URL: the password and the values of secret options (raw, as written). */
  public static List<String> secrets(String url) {
    List<String> out = new ArrayList<>();
    String pw = password(url);
    if (pw != null) {
      out.add(pw);
    }
    if (url == null) {
      return out;
    }
    int[] span = passwordSpan(url);
    int query = url.indexOf('?', span == null ? 0 : span[1]);
    if (query >= 0) {
      for (String item : url.substring(query + 1).split("&")) {
        int eq = item.indexOf('=');
        if (eq > 0 && eq < item.length() - 1 && isSecretOption(item.substring(0, eq))) {
          out.add(item.substring(eq + 1));
        }
      }
    }
    return out;
  }

  /**
   * Replaces every occurrence of the URL's credentials (password, secret option values; raw and
   * percent-decoded) in {@code text} by {@code ***} and flattens it to one line.
   */
  public static String scrub(String text, String url) {
    if (text == null) {
      return "";
    }
    String out = text;
    for (String secret : secrets(url)) {
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
   * Folds the deprecated properties of the stock YCSB 0.17.0 binding into the URL, each only when the URL
   * does not already set that option (option names compared case-insensitively):
   * {@code mongodb.maxconnections} to {@code maxPoolSize}; {@code mongodb.writeConcern} to {@code w} (or,
   * for {@code journaled}, to {@code journal=true}, which combines with a {@code w} already in the URL, as in
   * the stock binding); {@code mongodb.readPreference} to {@code readPreference}.
   * {@code mongodb.threadsAllowedToBlockForConnectionMultiplier} (the 3.x driver's wait queue) has no URL
   * equivalent on driver 5.x; see {@link #waitQueueMultiple}.
   *
   * @throws IllegalArgumentException (message fit for the user) on a value the stock binding would not map
   */
  public static String withDeprecatedOptions(String url, Properties props) {
    String out = url;
    String max = props.getProperty("mongodb.maxconnections");
    if (max != null && !hasOption(out, "maxPoolSize")) {
      out = addOption(out, "maxPoolSize=" + positiveInt(max, "mongodb.maxconnections"));
    }
    String wc = props.getProperty("mongodb.writeConcern");
    if (wc != null) {
      String value = wc.trim().toLowerCase(Locale.ROOT);
      String opt = writeConcernOption(value);
      if (opt == null) {
        throw new IllegalArgumentException("mongodb.writeConcern='" + wc.trim() + "' is not one of "
            + "unacknowledged, errors_ignored, acknowledged, journaled, replica_acknowledged, majority "
            + "(or set w= / journal= in mongodb.url instead)");
      }
      String name = opt.substring(0, opt.indexOf('='));
      if (!hasOption(out, name)) {
        out = addOption(out, opt);
      }
    }
    String rp = props.getProperty("mongodb.readPreference");
    if (rp != null) {
      String mode = readPreferenceMode(rp.trim().toLowerCase(Locale.ROOT));
      if (mode == null) {
        throw new IllegalArgumentException("mongodb.readPreference='" + rp.trim() + "' is not one of "
            + "primary, primary_preferred, secondary, secondary_preferred, nearest "
            + "(or set readPreference= in mongodb.url instead)");
      }
      if (!hasOption(out, "readPreference")) {
        out = addOption(out, "readPreference=" + mode);
      }
    }
    return out;
  }

  /**
   * {@code mongodb.threadsAllowedToBlockForConnectionMultiplier}, or 5 (the 3.x driver's default
   * {@code waitQueueMultiple}) when unset; with driver 3.8 at most this many times maxPoolSize threads could
   * wait for a connection.
   */
  public static int waitQueueMultiple(Properties props) {
    String value = props.getProperty("mongodb.threadsAllowedToBlockForConnectionMultiplier");
    return value == null ? 5 : positiveInt(value, "mongodb.threadsAllowedToBlockForConnectionMultiplier");
  }

  /** True when the query part of the URL sets {@code name} (case-insensitive, as the driver reads it). */
  public static boolean hasOption(String url, String name) {
    int[] span = passwordSpan(url);
    int query = url.indexOf('?', span == null ? 0 : span[1]);
    if (query < 0) {
      return false;
    }
    for (String item : url.substring(query + 1).split("[&;]")) {
      int eq = item.indexOf('=');
      String key = eq < 0 ? item : item.substring(0, eq);
      if (key.trim().equalsIgnoreCase(name)) {
        return true;
      }
    }
    return false;
  }

  private static int positiveInt(String value, String name) {
    try {
      int parsed = Integer.parseInt(value.trim());
      if (parsed >= 1) {
        return parsed;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(name + "='" + value.trim() + "' must be a positive integer");
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
