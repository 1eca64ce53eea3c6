// Every LLM on /v1/messages, with its official SDK: see matrix.ts.
import { matrixFor } from "./matrix";

matrixFor("/v1/messages");
