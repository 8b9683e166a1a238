import { cva, type VariantProps } from "class-variance-authority";
import type { ComponentProps } from "react";
import { cn } from "../../lib/utils";
import { TONE_CLASS } from "./tone";

export const alertVariants = cva("relative w-full rounded-lg border px-4 py-3 text-sm", {
  variants: {
    variant: {
      default: "bg-card text-card-foreground",
      destructive: cn(TONE_CLASS.destructive, "[&>[data-slot=alert-title]]:text-destructive"),
      success: TONE_CLASS.success,
      warning: TONE_CLASS.warning,
    },
  },
  defaultVariants: { variant: "default" },
});

export type AlertProps = ComponentProps<"div"> & VariantProps<typeof alertVariants>;

/** Defaults to role="alert" (announced at once); pass role="status" for polite, non-urgent messages. */
export function Alert({ className, variant, role = "alert", ...props }: AlertProps) {
  return <div role={role} className={cn(alertVariants({ variant }), className)} {...props} />;
}

export function AlertTitle({ className, ...props }: ComponentProps<"p">) {
  return <p data-slot="alert-title" className={cn("mb-1 font-medium leading-none", className)} {...props} />;
}

export function AlertDescription({ className, ...props }: ComponentProps<"div">) {
  return <div className={cn("text-sm text-muted-foreground [&_p]:leading-relaxed", className)} {...props} />;
}
