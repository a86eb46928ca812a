// File upload through Slack's external-upload flow:
// files.getUploadURLExternal -> POST the bytes to the returned upload_url ->
// files.completeUploadExternal.

import {
  Code,
  Form,
  Input,
  JSONValue,
  Request,
  Result,
  Schema,
  base64Decode,
  fail,
  failWith,
  invalidArguments,
  ok,
  progress,
  send,
  tool,
  utf8Of,
} from "@workbench/pdk-assemblyscript";
import { USER_AGENT, postForm } from "./client";
import { channelArg, tsArg } from "./args";

/** MAX_UPLOAD_BYTES caps one upload; the tool input itself is capped at 4 MiB by the host. */
const MAX_UPLOAD_BYTES: i32 = 4 << 20;

/** content returns the file's bytes from content or content_base64, or an error. */
function content(input: Input): Uint8Array | null {
  if (input.has("content_base64")) return base64Decode(input.str("content_base64"));
  const b = utf8Of(input.str("content"));
  return b.toBytes();
}

/** isHTTPURL reports whether s is an absolute http or https URL. */
function isHTTPURL(s: string): bool {
  return s.startsWith("https://") || s.startsWith("http://");
}

function upload(input: Input): Result {
  if (input.has("content") == input.has("content_base64")) {
    return invalidArguments('give exactly one of "content" (text) and "content_base64" (bytes)');
  }
  const bytes = content(input);
  if (bytes == null) return invalidArguments('field "content_base64": not valid base64', JSONValue.object().setString("field", "content_base64"));
  if (bytes.length == 0) return invalidArguments("the file is empty: Slack refuses empty uploads");
  if (bytes.length > MAX_UPLOAD_BYTES) return invalidArguments("the file is larger than " + MAX_UPLOAD_BYTES.toString() + " bytes");
  const filename = input.str("filename");

  const step1 = postForm(
    "files.getUploadURLExternal",
    new Form().add("filename", filename).add("length", bytes.length.toString()).addIf("alt_txt", input.str("alt_text")),
  );
  if (step1.failed) return step1.error!;
  const uploadURL = step1.data.getString("upload_url");
  const fileID = step1.data.getString("file_id");
  if (!isHTTPURL(uploadURL) || fileID.length == 0) {
    return fail(Code.UPSTREAM_ERROR, "Slack files.getUploadURLExternal returned no usable upload_url and file_id");
  }
  progress(1, 3, "got an upload URL for " + fileID);

  const up = send(
    Request.post(uploadURL).bytes("application/octet-stream", bytes).header("User-Agent", USER_AGENT),
  );
  if (up.error != null) return failWith(up.error!);
  const resp = up.response!;
  if (!resp.ok) {
    const d = JSONValue.object().setInteger("status", resp.status).setString("file_id", fileID);
    return fail(Code.UPSTREAM_ERROR, "uploading the file bytes failed with HTTP " + resp.status.toString(), d);
  }
  progress(2, 3, "uploaded " + bytes.length.toString() + " bytes");

  const title = input.str("title", filename);
  const files = JSONValue.array().push(JSONValue.object().setString("id", fileID).setString("title", title));
  const done = postForm(
    "files.completeUploadExternal",
    new Form()
      .add("files", files.toString())
      .addIf("channel_id", input.str("channel_id"))
      .addIf("initial_comment", input.str("initial_comment"))
      .addIf("thread_ts", input.str("thread_ts")),
  );
  if (done.failed) return done.error!;
  progress(3, 3, "completed");
  const list = JSONValue.array();
  const got = done.data.get("files");
  if (got != null) {
    for (let i = 0; i < got.length; i++) {
      const f = got.at(i)!;
      list.push(JSONValue.object().copyFrom(f, "id").copyFrom(f, "title").copyFrom(f, "name").copyFrom(f, "permalink"));
    }
  }
  return ok(JSONValue.object().set("files", list).setInteger("size", bytes.length));
}

export const uploadFileTool = tool(
  "slack_upload_file",
  "Uploads a file and optionally shares it in a conversation, through Slack's external upload flow " +
    "(files.getUploadURLExternal, the upload itself, files.completeUploadExternal). Give the content as text or base64.",
  Schema.object()
    .prop("filename", Schema.string().minLength(1).describe("File name, such as report.csv"), true)
    .prop("content", Schema.string().describe("File content as text (sent as UTF-8)"))
    .prop("content_base64", Schema.string().describe("File content as base64, for binary files"))
    .prop("title", Schema.string().describe("Title shown in Slack; default the file name"))
    .prop("channel_id", channelArg().describe("Share the file in this conversation"))
    .prop("initial_comment", Schema.string().describe("Message posted with the file"))
    .prop("thread_ts", tsArg("Share the file in the thread of this message"))
    .prop("alt_text", Schema.string().describe("Description of an image for screen readers")),
  upload,
)
  .titled("Upload a file")
  .openWorld()
  .output(Schema.openObject().prop("files", Schema.array(Schema.openObject())).prop("size", Schema.integer()));
