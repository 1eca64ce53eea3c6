// An IrAnswer → the Responses object the client asked for (a JSON answer). Items in the answer's order: reasoning
// (summary text + encrypted_content = the sealed opaque value), message (output_text), function_call (or
// custom_tool_call for the request's custom tools; under its namespace for a namespace tool's member).

import type { IrAnswer } from "../ir";
import {
  answerContext,
  customInput,
  customToolCallItem,
  functionCallItem,
  itemId,
  messageItem,
  NO_ARGUMENTS,
  reasoningItem,
  responseObject,
  sealedReasoning,
  statusFor,
  toolRef,
  usageOut,
} from "./shape";

export function encodeAnswer(answer: IrAnswer, request: Record<string, any>): Record<string, unknown> {
  const ctx = answerContext(request, answer.id, answer.model);
  const { status, incomplete_details } = statusFor(answer.stop);
  const itemStatus = status === "incomplete" ? "incomplete" : "completed";
  const output: object[] = answer.parts.map((part, n) => {
    switch (part.type) {
      case "reasoning":
        return reasoningItem(itemId(ctx, "rs", n), part.text, sealedReasoning(part.origin, part.opaque, part.redacted));
      case "text":
        return messageItem(itemId(ctx, "msg", n), part.text, itemStatus);
      case "tool_call":
        return ctx.customTools.has(part.name)
          ? customToolCallItem(
              itemId(ctx, "ctc", n),
              part.id,
              toolRef(ctx, part.name),
              customInput(part.arguments),
              itemStatus,
            )
          : functionCallItem(
              itemId(ctx, "fc", n),
              part.id,
              toolRef(ctx, part.name),
              part.arguments || NO_ARGUMENTS,
              itemStatus,
            );
    }
  });
  return responseObject(ctx, status, output, usageOut(answer.usage), { incomplete_details });
}
