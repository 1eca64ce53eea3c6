// Every LLM on /v1/chat/completions, with its official SDK: see matrix.ts.
import { matrixFor } from "./matrix";

matrixFor("/v1/chat/completions");
